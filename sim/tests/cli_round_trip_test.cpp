// The CLI: run prints a hash and a replay command; the replay command prints the same hash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "cli_support.hpp"

namespace {

using weft::sim::testing::binary;
using weft::sim::testing::output;
using weft::sim::testing::shell;

std::string line_value(const std::string& text, const std::string& key) {
  const auto at = text.find("\n" + key);
  const auto begin = at == std::string::npos ? (text.rfind(key, 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (begin == std::string::npos) return "";
  const auto end = text.find('\n', begin);
  return text.substr(begin + key.size(), end - begin - key.size());
}

TEST(cli, run_and_replay_print_the_same_trace_hash) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  for (const char* strategy : {"random", "pct"}) {
    const output run = shell(binary() + " run --scenario inbox_overflow --seed 42 --strategy " + strategy);
    ASSERT_EQ(run.status, 0) << run.text;
    EXPECT_EQ(run.text.rfind("weft-sim: scenario=inbox_overflow seed=42 strategy=", 0), 0u) << run.text;
    const std::string hash = line_value(run.text, "trace-hash: ");
    EXPECT_EQ(hash.size(), 16u) << run.text;
    EXPECT_EQ(line_value(run.text, "outcome: "), "pass");
    const std::string replay = line_value(run.text, "replay: ");
    ASSERT_FALSE(replay.empty()) << run.text;
    const output again = shell(replay);
    ASSERT_EQ(again.status, 0) << again.text;
    EXPECT_EQ(line_value(again.text, "trace-hash: "), hash) << again.text;
  }
}

TEST(cli, fuzz_reports_its_summary_line_and_check_determinism_passes) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output fuzz =
      shell(binary() + " fuzz --scenario wake_storm --seeds 50 --start 10 --jobs 2 --shard 1/2 --check-determinism");
  ASSERT_EQ(fuzz.status, 0) << fuzz.text;
  EXPECT_NE(fuzz.text.find("fuzz: 25 seeds, 0 failures, "), std::string::npos) << fuzz.text;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(cli, a_replay_writes_the_same_text_and_chrome_traces_with_task_events) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const auto dir = std::filesystem::temp_directory_path() / ("weft-cli-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto files = [&](const char* tag) {
    return " --trace " + (dir / (std::string(tag) + ".txt")).string() + " --chrome-trace " +
           (dir / (std::string(tag) + ".json")).string();
  };
  const output run = shell(binary() + " run --scenario cross_worker_ping_pong --seed 7" + files("run"));
  ASSERT_EQ(run.status, 0) << run.text;
  const std::string replay = line_value(run.text, "replay: ");
  ASSERT_FALSE(replay.empty()) << run.text;
  const output again = shell(replay + " --check-determinism" + files("replay"));
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_EQ(line_value(again.text, "trace-hash: "), line_value(run.text, "trace-hash: "));

  const std::string text = slurp(dir / "run.txt");
  EXPECT_EQ(text, slurp(dir / "replay.txt"));
  EXPECT_NE(text.find(" task f="), std::string::npos);
  EXPECT_NE(text.find(" poll_begin task="), std::string::npos);
  const std::string chrome = slurp(dir / "run.json");
  EXPECT_EQ(chrome, slurp(dir / "replay.json"));
  const auto doc = nlohmann::json::parse(chrome);  // throws on invalid JSON
  std::size_t polls = 0, wakes = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    const std::string name = ev.value("name", "");
    polls += ev.at("ph") == "X" && name.rfind("poll task ", 0) == 0 ? 1 : 0;
    wakes += ev.at("ph") == "i" && name.rfind("wake task ", 0) == 0 ? 1 : 0;
  }
  EXPECT_GT(polls, 0u);
  EXPECT_GT(wakes, 0u);
  std::filesystem::remove_all(dir);
}

TEST(cli, an_unknown_scenario_is_an_error) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output r = shell(binary() + " run --scenario no_such_thing --seed 1");
  EXPECT_EQ(r.status, weft::sim::testing::exit_unknown_scenario) << r.text;
  EXPECT_NE(r.text.find("no scenario named 'no_such_thing'"), std::string::npos) << r.text;
}

}  // namespace
