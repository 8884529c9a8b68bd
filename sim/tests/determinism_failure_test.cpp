// The determinism check's failure path: a scenario whose runs differ for the same seed (state
// kept in a static across runs, test_state_leaks_across_runs) is reported by `run` and `fuzz
// --check-determinism` with the first event where the two runs' traces part, and exit status 1.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"

namespace {

using weft::sim::testing::cli;
using weft::sim::testing::cli_output;
using weft::sim::testing::exit_failed;

// The text after `key` on the line that starts with it, or "" (key not found).
std::string after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  const auto begin = at + key.size();
  return text.substr(begin, text.find('\n', begin) - begin);
}

// The two diverging lines, "run 1" then "run 2", that follow the report's first line: in one run
// the leaking thread (fiber 2) yields once more, in the other it exits at that point. Which run
// yields depends on how many runs came before, so either order is accepted.
void expect_two_diverging_events(const std::string& text) {
  const std::string first = after(text, "\n  run 1: ");
  const std::string second = after(text, "\n  run 2: ");
  const auto yields = [](const std::string& line) {
    return line.find(" yield f=2 yield_thread at=known_bad_scenarios.cpp:") != std::string::npos;
  };
  const auto exits = [](const std::string& line) { return line.find(" exit f=2") != std::string::npos; };
  EXPECT_TRUE((yields(first) && exits(second)) || (exits(first) && yields(second)))
      << "run 1: " << first << "\nrun 2: " << second << "\n" << text;
}

TEST(determinism_failure, run_reports_the_first_diverging_event_and_exits_1) {
  const cli_output r = cli({"run", "--scenario", "test_state_leaks_across_runs", "--seed", "3", "--check-determinism"});
  EXPECT_EQ(r.status, exit_failed) << r.out << r.err;
  EXPECT_NE(r.out.find("\ndeterminism: DIVERGED, first divergent event #11\n"), std::string::npos) << r.out;
  expect_two_diverging_events(r.out);
  EXPECT_NE(r.out.find("\noutcome: fail\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(determinism_failure, fuzz_reports_every_seed_with_both_diverging_events_and_exits_1) {
  const cli_output r =
      cli({"fuzz", "--scenario", "test_state_leaks_across_runs", "--seeds", "3", "--check-determinism"});
  EXPECT_EQ(r.status, exit_failed) << r.out << r.err;
  for (const char* seed : {"0", "1", "2"}) {
    const std::string report = "fail: seed=" + std::string(seed) + ": nondeterministic: first divergent event #";
    const auto at = r.out.find(report);
    ASSERT_NE(at, std::string::npos) << r.out;
    expect_two_diverging_events(r.out.substr(at));
  }
  EXPECT_NE(r.out.find("fuzz: 3 seeds, 3 failures"), std::string::npos) << r.out;
}

// Without the check the same scenario passes: only a second run shows the leak.
TEST(determinism_failure, without_the_check_the_leak_goes_unseen) {
  const cli_output r = cli({"fuzz", "--scenario", "test_state_leaks_across_runs", "--seeds", "3"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

}  // namespace
