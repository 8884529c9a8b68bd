// check_api_test.cpp — weft::sim::check and WEFT_SIM_TEST: a sound body passes, a racy one is
// found, shrunk, traced and reproduced by the environment line it prints, and bad environment
// values are refused before any run.
#include <cerrno>  // program_invocation_name
#include <cstdlib>
#include <functional>
#include <memory>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>

#include <weft/sim/gtest.hpp>
#include <weft/sim/trace.hpp>
#include <weft/weft.hpp>

#include "../../tests/consumer/sim/increments.hpp"
#include "../src/record.hpp"

namespace {

using weft::sim::check;
using weft::sim::check_options;
using weft::sim::check_result;

// The consumer programs' code under test (tests/consumer/sim/increments.hpp): a counter whose
// increments race when split across a suspension.
void sound(weft::sim::context& sim) { increment_twice(sim, false); }
void racy(weft::sim::context& sim) { increment_twice(sim, true); }

// Fails its first run only, as a body does whose state outlives a run (a static counter, say).
std::function<void(weft::sim::context&)> fails_its_first_run() {
  return [runs = std::make_shared<int>(0)](weft::sim::context& sim) {
    if ((*runs)++ == 0) sim.fail("the first run fails");
  };
}

// Fails every run, each after one more note than the last: no two runs of a seed are alike.
std::function<void(weft::sim::context&)> fails_each_run_differently() {
  return [runs = std::make_shared<int>(0)](weft::sim::context& sim) {
    for (int i = 0; i <= *runs; ++i) sim.note("another note");
    ++*runs;
    sim.fail("every run fails");
  };
}

weft::sim::record read_record(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return weft::sim::parse_record(text.str(), weft::sim::build_id(), false);
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Points program_invocation_name (argv[0], the reproduction's default command) elsewhere for
// one scope.
class scoped_program_name {
 public:
  explicit scoped_program_name(std::string name) : name_(std::move(name)), old_(program_invocation_name) {
    program_invocation_name = name_.data();
  }
  ~scoped_program_name() { program_invocation_name = old_; }
  scoped_program_name(const scoped_program_name&) = delete;
  scoped_program_name& operator=(const scoped_program_name&) = delete;

 private:
  std::string name_;
  char* old_;
};

// The messages of the failures gtest_check reports, caught instead of failing this test.
std::vector<std::string> gtest_check_failures(const char* suite, const char* name, check_options o,
                                              void (*body)(weft::sim::context&)) {
  ::testing::TestPartResultArray caught;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &caught);
    weft::sim::gtest_check(suite, name, std::move(o), body);
  }
  std::vector<std::string> messages;
  for (int i = 0; i < caught.size(); ++i) messages.emplace_back(caught.GetTestPartResult(i).message());
  return messages;
}

TEST(check_api, a_sound_body_passes_every_seed) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  const check_result r = check({.seeds = 40}, sound);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.seeds_run, 40u);
  EXPECT_EQ(r.probes.describe().rfind("probes: ", 0), 0u) << r.probes.describe();
  // This program links probes (buggify_test.cpp), so the coverage line follows.
  EXPECT_EQ(r.message(), "passed 40 seeds\n" + r.probes.describe());
  EXPECT_TRUE(r.pct_bound.empty()) << "the bound is PCT's alone";
}

// pick(lo, hi) covers its whole range, also the widest one (whose width does not fit in 64 bits).
TEST(check_api, pick_draws_over_the_whole_64_bit_range) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  std::uint64_t ored = 0;
  const check_result r = check({.seeds = 20}, [&ored](weft::sim::context& sim) {
    const std::uint64_t any = sim.pick(0, ~std::uint64_t{0});
    ored |= any;
    const std::uint64_t top = sim.pick(~std::uint64_t{0} - 1, ~std::uint64_t{0});
    if (top < ~std::uint64_t{0} - 1) throw std::logic_error("pick below its range");
  });
  EXPECT_TRUE(r.passed) << r.message();
  // Twenty uniform draws set the highest bit and the lowest with overwhelming probability.
  EXPECT_NE(ored & (std::uint64_t{1} << 63), 0u);
  EXPECT_NE(ored & 1u, 0u);
}

TEST(check_api, a_failing_seed_is_traced_and_rerun_alone_by_its_reproduction) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  const check_result r = check({.seeds = 500, .name = "check_api.racy", .rerun = "./my_tests"}, racy);
  ASSERT_FALSE(r.passed) << "500 seeds never interleaved the two read-yield-writes";
  EXPECT_EQ(r.seeds_run, r.failing_seed + 1);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_NE(r.failures.front().find("an increment was lost"), std::string::npos) << r.failures.front();
  EXPECT_EQ(r.reproduction, "WEFT_SIM_SEED=" + std::to_string(r.failing_seed) + " ./my_tests");
  const std::string message = r.message();
  EXPECT_NE(message.find("reproduce: " + r.reproduction), std::string::npos) << message;

  ASSERT_FALSE(r.trace_path.empty()) << r.trace_error;
  EXPECT_EQ(std::filesystem::path(r.trace_path).parent_path(), std::filesystem::path(::testing::TempDir()).parent_path());
  std::ifstream trace(r.trace_path);
  std::string first_line;
  std::getline(trace, first_line);
  EXPECT_FALSE(first_line.empty());
  EXPECT_GT(std::filesystem::file_size(r.trace_path), 100u);

  // The replay record sits beside the trace and holds the failing seed and options. Its
  // scenario is this body, which weft-sim does not have: loading it says how to rerun it.
  ASSERT_FALSE(r.record_path.empty()) << r.record_error;
  EXPECT_EQ(r.record_path, r.trace_path.substr(0, r.trace_path.size() - 5) + ".weft-sim.json");
  EXPECT_NE(message.find("record: " + r.record_path + "\n"), std::string::npos) << message;
  std::ostringstream text;
  text << std::ifstream(r.record_path).rdbuf();
  const weft::sim::record rec = weft::sim::parse_record(text.str(), weft::sim::build_id(), false);
  EXPECT_EQ(rec.command, "check");
  EXPECT_EQ(rec.scenario, "check_api.racy");
  EXPECT_EQ(rec.seed, r.failing_seed);
  EXPECT_FALSE(rec.passed);
  EXPECT_EQ(rec.failure, r.failures.front().substr(0, r.failures.front().find('\n')));
  try {
    (void)weft::sim::load_record(text.str(), weft::sim::build_id(), false);
    ADD_FAILURE() << "a check's record named a registered scenario";
  } catch (const weft::sim::invalid_options& e) {
    EXPECT_NE(std::string(e.what()).find("a weft::sim::check record: run the test program"), std::string::npos)
        << e.what();
  }

  // What the reproduction sets: exactly that seed runs, and fails the same way.
  scoped_env replay("WEFT_SIM_SEED", std::to_string(r.failing_seed));
  const check_result again = check({.seeds = 500, .name = "check_api.racy"}, racy);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.seeds_run, 1u);
  EXPECT_EQ(again.failing_seed, r.failing_seed);
  EXPECT_EQ(again.failures, r.failures);
  EXPECT_TRUE(again.shrunk.empty()) << "a replay of one seed is not shrunk";
  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);
}

// WEFT_SIM_RECORD runs the record's seed with its options, once, and only for the check it names.
TEST(check_api, a_record_is_replayed_by_the_check_that_wrote_it) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env strategy("WEFT_SIM_STRATEGY", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  check_options pct{.seeds = 500, .name = "check_api.racy_pct"};
  pct.sim.strategy = weft::sim::strategy_kind::pct;
  // Change points within the body's length (a few hundred steps), not the default 1,000: a run
  // then finds the planted race about once in 80 seeds instead of once in 500-1,000, so the
  // 500 seeds find it whatever the runtime's step count.
  pct.sim.pct_steps = 100;
  const check_result r = check(pct, racy);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.record_path.empty()) << r.record_error;

  // The code now asks for the random strategy: the record's options win.
  scoped_env record("WEFT_SIM_RECORD", r.record_path);
  const check_result again = check({.seeds = 500, .name = "check_api.racy_pct"}, racy);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.seeds_run, 1u);
  EXPECT_EQ(again.failing_seed, r.failing_seed);
  EXPECT_EQ(again.failures, r.failures);

  const auto refused = [&](const check_options& o) -> std::string {
    try {
      (void)check(o, racy);
    } catch (const weft::sim::invalid_options& e) {
      EXPECT_EQ(e.flag(), "WEFT_SIM_RECORD") << e.what();
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(refused({.name = "check_api.other"}),
            "WEFT_SIM_RECORD: '" + r.record_path + "' is a record of 'check_api.racy_pct', not of 'check_api.other'");
  {
    scoped_env also("WEFT_SIM_SEED", "3");
    EXPECT_EQ(refused({.name = "check_api.racy_pct"}),
              "WEFT_SIM_RECORD: cannot be combined with WEFT_SIM_SEED (the record holds the seed and options)");
  }
  std::ostringstream text;
  text << std::ifstream(r.record_path).rdbuf();
  auto doc = text.str();
  const auto at = doc.find(weft::sim::build_id());
  ASSERT_NE(at, std::string::npos);
  doc.replace(at, 16, weft::sim::build_id() == "0123456789abcdef" ? "fedcba9876543210" : "0123456789abcdef");
  const std::string foreign = r.record_path + ".foreign";
  std::ofstream(foreign) << doc;
  scoped_env foreign_record("WEFT_SIM_RECORD", foreign);
  EXPECT_NE(refused({.name = "check_api.racy_pct"}).find("written by build "), std::string::npos);
  std::filesystem::remove(foreign);
  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);
}

TEST(check_api, shell_word_quotes_what_the_shell_would_split_or_expand) {
  EXPECT_EQ(weft::sim::shell_word("./build/sim/my_tests"), "./build/sim/my_tests");
  EXPECT_EQ(weft::sim::shell_word("--gtest_filter=suite.name"), "--gtest_filter=suite.name");
  EXPECT_EQ(weft::sim::shell_word("/opt/build dir/my_tests"), "'/opt/build dir/my_tests'");
  EXPECT_EQ(weft::sim::shell_word("it's$HOME"), "'it'\\''s$HOME'");
  EXPECT_EQ(weft::sim::shell_word(""), "''");
}

// A program path with a space is one word of the reproduction, by check() and WEFT_SIM_TEST.
TEST(check_api, the_reproduction_quotes_the_program_path) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  scoped_program_name program("/opt/build dir/it's_tests");
  const check_result r = check({.seeds = 500, .shrink = false, .name = "check_api.quoted"}, racy);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.reproduction, "WEFT_SIM_SEED=" + std::to_string(r.failing_seed) + " '/opt/build dir/it'\\''s_tests'");

  const std::vector<std::string> failures =
      gtest_check_failures("suite", "racy", check_options{.seeds = 500, .shrink = false}, racy);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures.front().find("reproduce: WEFT_SIM_SEED=" + std::to_string(r.failing_seed) +
                                  " '/opt/build dir/it'\\''s_tests' --gtest_filter=suite.racy"),
            std::string::npos)
      << failures.front();
  const std::string stem = ::testing::TempDir() + "suite.racy-seed-" + std::to_string(r.failing_seed);
  std::filesystem::remove(stem + ".json");
  std::filesystem::remove(stem + ".weft-sim.json");
  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);
}

// A failure replayed from a record reproduces with the record, not with its seed alone: the
// seed under the code's own options (here the random strategy, not the record's pct) is another run.
TEST(check_api, a_record_replay_reproduces_with_the_record) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env strategy("WEFT_SIM_STRATEGY", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  check_options pct{.seeds = 500, .shrink = false, .name = "check_api.racy_pct_line"};
  pct.sim.strategy = weft::sim::strategy_kind::pct;
  pct.sim.pct_steps = 100;  // finds the race within the 500 seeds (see above)
  const check_result r = check(pct, racy);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.record_path.empty()) << r.record_error;

  scoped_env record("WEFT_SIM_RECORD", r.record_path);
  const check_result again = check({.seeds = 500, .name = "check_api.racy_pct_line", .rerun = "./my_tests"}, racy);
  ASSERT_FALSE(again.passed);
  EXPECT_EQ(again.reproduction, "WEFT_SIM_RECORD=" + r.record_path + " ./my_tests");
  EXPECT_NE(again.message().find("\nreproduce: " + again.reproduction), std::string::npos) << again.message();

  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);
}

// A seed that fails once and then passes, or fails another way, on a rerun is no reproduction:
// the report says the body is nondeterministic, offers the seed only as the one that failed once,
// and fails; the record keeps the failing run's outcome.
TEST(check_api, a_failure_a_rerun_does_not_repeat_is_reported_as_nondeterministic) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env strategy("WEFT_SIM_STRATEGY", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  struct variant {
    const char* what;
    bool shrink;
    std::optional<std::string> seed;  // WEFT_SIM_SEED
  };
  for (const variant& v : {variant{"shrunk", true, std::nullopt}, variant{"unshrunk", false, std::nullopt},
                           variant{"WEFT_SIM_SEED", true, "0"}}) {
    SCOPED_TRACE(v.what);
    scoped_env seed("WEFT_SIM_SEED", v.seed);
    const check_result r =
        check({.seeds = 10, .shrink = v.shrink, .name = "check_api.flaky", .rerun = "./my_tests"}, fails_its_first_run());
    EXPECT_FALSE(r.passed);
    EXPECT_FALSE(r.reproduced);
    EXPECT_EQ(r.failing_seed, 0u);
    EXPECT_EQ(r.divergence.rfind("not reproduced: a rerun of seed 0 passed with trace-hash ", 0), 0u) << r.divergence;
    EXPECT_TRUE(r.shrunk.empty());
    const std::string message = r.message();
    EXPECT_EQ(message.rfind("failed at seed 0 (after 1 seeds), but not reproducibly:\n  the first run fails\n" +
                                r.divergence + "\n  the body is nondeterministic: ",
                            0),
              0u)
        << message;
    EXPECT_EQ(message.find("reproduce: "), std::string::npos) << message;
    EXPECT_NE(message.find("\nseed that failed once (not a reproduction): WEFT_SIM_SEED=0 ./my_tests"), std::string::npos)
        << message;
    ASSERT_FALSE(r.record_path.empty()) << r.record_error;
    const weft::sim::record rec = read_record(r.record_path);
    EXPECT_FALSE(rec.passed);
    EXPECT_EQ(rec.failure, "the first run fails");
    std::filesystem::remove(r.trace_path);
    std::filesystem::remove(r.record_path);
  }

  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  const check_result r = check({.seeds = 10, .name = "check_api.flaky"}, fails_each_run_differently());
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.reproduced);
  EXPECT_EQ(r.divergence.rfind("not reproduced: a rerun of seed 0 failed with trace-hash ", 0), 0u) << r.divergence;
  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);

  // A deterministic failure is reproduced by every rerun.
  const check_result racy_result = check({.seeds = 500, .name = "check_api.racy"}, racy);
  EXPECT_FALSE(racy_result.passed);
  EXPECT_TRUE(racy_result.reproduced) << racy_result.divergence;
  EXPECT_TRUE(racy_result.divergence.empty());
  std::filesystem::remove(racy_result.trace_path);
  std::filesystem::remove(racy_result.record_path);
}

// A record replayed into another outcome or trace is not reproduced, in weft-sim replay's words,
// and fails the check; the record stays as it was.
TEST(check_api, a_record_replay_that_goes_another_way_is_not_reproduced) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env strategy("WEFT_SIM_STRATEGY", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  const check_result r = check({.seeds = 500, .shrink = false, .name = "check_api.replayed"}, racy);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.record_path.empty()) << r.record_error;
  const weft::sim::record rec = read_record(r.record_path);

  scoped_env record("WEFT_SIM_RECORD", r.record_path);
  const check_result same = check({.seeds = 500, .name = "check_api.replayed"}, racy);
  EXPECT_FALSE(same.passed);
  EXPECT_TRUE(same.reproduced) << same.divergence;

  // The body now passes that seed, as one whose outcome hangs on state outside the run would.
  const check_result other = check({.seeds = 500, .name = "check_api.replayed", .rerun = "./my_tests"}, sound);
  EXPECT_FALSE(other.passed);
  EXPECT_FALSE(other.reproduced);
  EXPECT_EQ(other.failing_seed, rec.seed);
  EXPECT_EQ(other.failures, std::vector<std::string>{rec.failure});
  EXPECT_EQ(other.divergence.rfind("record: NOT reproduced: the record has trace-hash " + weft::sim::hex16(rec.trace_hash) +
                                       ", outcome fail; this run has trace-hash ",
                                   0),
            0u)
      << other.divergence;
  EXPECT_NE(other.divergence.find(", outcome pass"), std::string::npos) << other.divergence;
  EXPECT_EQ(other.record_path, r.record_path);
  const std::string message = other.message();
  EXPECT_NE(message.find("\n" + other.divergence + "\n  the body is nondeterministic: "), std::string::npos) << message;
  EXPECT_NE(message.find("\nseed that failed once (not a reproduction): WEFT_SIM_RECORD=" + r.record_path + " ./my_tests"),
            std::string::npos)
      << message;
  EXPECT_EQ(read_record(r.record_path).trace_hash, rec.trace_hash);
  std::filesystem::remove(r.trace_path);
  std::filesystem::remove(r.record_path);
}

TEST(check_api, the_environment_overrides_seeds_and_strategy) {
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env seeds("WEFT_SIM_SEEDS", "7");
  scoped_env strategy("WEFT_SIM_STRATEGY", "pct");
  const check_result r = check({.seeds = 1000}, sound);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.seeds_run, 7u);
  // PCT: the pass reports what the seeds rule out.
  EXPECT_EQ(r.pct_bound.rfind("pct-bound: d=3 ", 0), 0u) << r.pct_bound;
  EXPECT_NE(r.pct_bound.find("7 seeds miss it"), std::string::npos) << r.pct_bound;
  EXPECT_EQ(r.message(), "passed 7 seeds\n" + r.pct_bound + "\n" + r.probes.describe());
}

TEST(check_api, bad_environment_values_and_options_are_refused_before_any_run) {
  struct bad {
    const char* name;
    const char* value;
  };
  const bad cases[] = {
      {"WEFT_SIM_SEEDS", "0"},         {"WEFT_SIM_SEEDS", "-1"},
      {"WEFT_SIM_SEEDS", "12x"},       {"WEFT_SIM_SEEDS", "18446744073709551616"},
      {"WEFT_SIM_SEEDS", ""},          {"WEFT_SIM_SEED", " 3"},
      {"WEFT_SIM_STRATEGY", "dfs"},    {"WEFT_SIM_TRACE_DIR", "/nonexistent/weft-sim-traces"},
  };
  for (const bad& c : cases) {
    scoped_env env(c.name, std::string(c.value));
    try {
      (void)check({.seeds = 3}, sound);
      ADD_FAILURE() << c.name << "=" << c.value << " was accepted";
    } catch (const weft::sim::invalid_options& e) {
      EXPECT_EQ(e.flag(), c.name) << e.what();
    }
  }
  EXPECT_THROW((void)check({.seeds = 0}, sound), weft::sim::invalid_options);
  EXPECT_THROW((void)check({.seeds = 2, .start = ~std::uint64_t{0}}, sound), weft::sim::invalid_options);
  EXPECT_THROW((void)check({.knobs = {{"n", 5, 1, "inverted"}}}, sound), weft::sim::invalid_options);
}

WEFT_SIM_TEST_WITH(check_api_macro, a_sound_body_passes, (check_options{.seeds = 20})) { sound(sim); }

TEST(check_api_macro, a_failing_body_fails_its_test_with_the_reproduction_line) {
  EXPECT_NONFATAL_FAILURE(weft::sim::gtest_check("suite", "racy", check_options{.seeds = 500, .shrink = false}, racy),
                          "reproduce: WEFT_SIM_SEED=");
}

// Fail on about one seed in ten through a GoogleTest assertion rather than sim.fail.
void expects_no_seven(weft::sim::context& sim) { EXPECT_NE(sim.pick(0, 9), std::uint64_t{7}) << "drew 7"; }
void asserts_no_seven(weft::sim::context& sim) {
  ASSERT_NE(sim.pick(0, 9), std::uint64_t{7}) << "drew 7";
  sim.note("no 7");
}

// A failed EXPECT_/ASSERT_ in the body fails its seed: the test fails once, with the seed's
// report and reproduction, however many runs (the shrinker's among them) hit the assertion.
TEST(check_api_macro, a_googletest_assertion_in_the_body_fails_its_seed) {
  scoped_env seeds("WEFT_SIM_SEEDS", std::nullopt);
  scoped_env seed("WEFT_SIM_SEED", std::nullopt);
  scoped_env strategy("WEFT_SIM_STRATEGY", std::nullopt);
  scoped_env dir("WEFT_SIM_TRACE_DIR", ::testing::TempDir());
  for (void (*body)(weft::sim::context&) : {expects_no_seven, asserts_no_seven}) {
    const std::vector<std::string> failures =
        gtest_check_failures("check_api_gtest", "no_seven", check_options{.seeds = 200, .shrink_runs = 300}, body);
    ASSERT_EQ(failures.size(), 1u);
    const std::string& report = failures.front();
    const std::size_t at = report.find("failed at seed ");
    ASSERT_NE(at, std::string::npos) << report;
    const std::string failing_seed = report.substr(at + 15, report.find(' ', at + 15) - at - 15);
    EXPECT_NE(report.find(":\n  GoogleTest assertion failed at "), std::string::npos) << report;
    EXPECT_NE(report.find("check_api_test.cpp:"), std::string::npos) << report;
    EXPECT_NE(report.find("drew 7"), std::string::npos) << report;
    EXPECT_NE(report.find("\nreproduce: WEFT_SIM_SEED=" + failing_seed + " "), std::string::npos) << report;
    const std::string stem = ::testing::TempDir() + "check_api_gtest.no_seven-seed-" + failing_seed;
    EXPECT_TRUE(std::filesystem::exists(stem + ".json")) << stem;
    std::filesystem::remove(stem + ".json");
    std::filesystem::remove(stem + ".weft-sim.json");
  }
  EXPECT_TRUE(gtest_check_failures("check_api_gtest", "pass", check_options{.seeds = 20}, sound).empty());
}

}  // namespace
