// CLI input validation: every bad flag value ends the command before any run with exit status 2
// and a stderr line naming the flag; `fuzz` computes its seeds on demand (a huge --seeds runs its
// first seed under a small address-space limit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../src/seed_range.hpp"
#include "cli_support.hpp"

namespace {

using weft::sim::testing::binary;
using weft::sim::testing::output;
using weft::sim::testing::shell;
using weft::sim::testing::shell_raw;
using namespace weft::sim::testing;  // the exit statuses

struct bad_input {
  const char* args;  // after the binary
  const char* flag;  // what stderr must name
  int status = exit_usage;
};

// Each is wrong in exactly one flag; the rest would run.
const std::vector<bad_input> bad_inputs = {
    {"run --scenario wake_storm --seed -1", "--seed"},
    {"run --scenario wake_storm --seed 18446744073709551616", "--seed"},
    {"run --scenario wake_storm --seed 12abc", "--seed"},
    {"run --scenario wake_storm --seed ' 5'", "--seed"},
    {"run --scenario wake_storm --seed +5", "--seed"},
    {"replay --scenario wake_storm --seed -1", "--seed"},
    {"run --scenario wake_storm --seed 1 --seed 2", "--seed"},
    {"fuzz --scenario wake_storm --seeds 0", "--seeds"},
    {"fuzz --scenario wake_storm --seeds -5", "--seeds"},
    {"fuzz --scenario wake_storm --seeds 18446744073709551616", "--seeds"},
    {"fuzz --scenario wake_storm --seeds 3 --start 18446744073709551614", "--seeds"},
    {"fuzz --scenario wake_storm --seeds 1 --start -1", "--start"},
    {"run --scenario wake_storm --seed 1 --param nosuch=1", "--param", exit_unknown_knob},
    {"run --scenario wake_storm --seed 1 --param tasks=notanumber", "--param"},
    {"run --scenario wake_storm --seed 1 --param tasks=99999999999999999999", "--param"},
    {"run --scenario wake_storm --seed 1 --param tasks=0", "--param"},
    {"run --scenario wake_storm --seed 1 --param tasks=10001", "--param"},
    {"run --scenario wake_storm --seed 1 --param tasks", "--param"},
    {"run --scenario wake_storm --seed 1 --param =3", "--param"},
    {"run --scenario wake_storm --seed 1 --param tasks=2 --param tasks=3", "--param"},
    {"run --scenario shutdown_race --seed 1 --param workers=0", "--param"},
    {"run --scenario shutdown_race --seed 1 --param stop_mode=4", "--param"},
    {"run --scenario cross_worker_ping_pong --seed 1 --param workers=1", "--param"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=nan", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=inf", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=-0.1", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=1.5", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=0.5x", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=1e-9", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault nosuch=0.1", "--fault"},
    {"run --scenario wake_storm --seed 1 --fault inbox_full=0.1 --fault inbox_full=0.2", "--fault"},
    {"run --scenario wake_storm --seed 1 --cores 0", "--cores"},
    {"run --scenario wake_storm --seed 1 --cores 4097", "--cores"},
    {"replay --scenario wake_storm --seed 1 --cores 0", "--cores"},
    {"run --scenario wake_storm --seed 1 --strategy pct --depth 0", "--depth"},
    {"run --scenario wake_storm --seed 1 --strategy pct --depth 1025", "--depth"},
    {"run --scenario wake_storm --seed 1 --depth 2", "--depth"},
    {"run --scenario wake_storm --seed 1 --strategy pct --pct-steps 0", "--pct-steps"},
    {"run --scenario wake_storm --seed 1 --pct-steps 10", "--pct-steps"},
    {"run --scenario wake_storm --seed 1 --preemptions -1", "--preemptions"},
    {"run --scenario wake_storm --seed 1 --step-budget 0", "--step-budget"},
    {"run --scenario wake_storm --seed 1 --strategy nosuch", "--strategy"},
    {"run --scenario wake_storm --seed 1 --trace /nonexistent-weft-dir/trace.txt", "--trace", exit_io},
    {"run --scenario wake_storm --seed 1 --chrome-trace /nonexistent-weft-dir/trace.json", "--chrome-trace", exit_io},
    {"run --scenario wake_storm --seed 1 --trace ''", "--trace"},
    {"fuzz --scenario wake_storm --seeds 2 --jobs 0", "--jobs"},
    {"fuzz --scenario wake_storm --seeds 2 --jobs -1", "--jobs"},
    {"fuzz --scenario wake_storm --seeds 2 --jobs 100000", "--jobs"},
    {"fuzz --scenario wake_storm --seeds 4 --shard 4/4", "--shard"},
    {"fuzz --scenario wake_storm --seeds 4 --shard 0/0", "--shard"},
    {"fuzz --scenario wake_storm --seeds 4 --shard 0/5", "--shard"},
    {"fuzz --scenario wake_storm --seeds 4 --shard -1/4", "--shard"},
    {"fuzz --scenario wake_storm --seeds 4 --shard 1", "--shard"},
    {"fuzz --scenario wake_storm --seeds 2 --max-failures -1", "--max-failures"},
    {"fuzz --scenario wake_storm --seeds 2 --max-runs 5", "--max-runs"},
    {"fuzz --scenario wake_storm --seeds 2 --seed-tries 5", "--seed-tries"},
    {"fuzz --scenario wake_storm --seeds 2 --shrink --check-determinism", "--shrink"},
    {"shrink --scenario wake_storm --seed 1 --max-runs 0", "--max-runs"},
    {"shrink --scenario wake_storm --seed 1 --seed-tries 0", "--seed-tries"},
    {"shrink --scenario wake_storm --seed 1 --param-floor x", "--param-floor"},
    {"shrink --scenario wake_storm --seed 1 --check-determinism", "--check-determinism"},
    {"shrink --scenario wake_storm --seed 18446744073709551616", "--seed"},
    {"run --scenario wake_storm --seed 1 --swarm --swarm", "--swarm"},
    {"run --scenario wake_storm --seed 1 --swarm --fault inbox_full=0", "--fault"},
    {"run --scenario wake_storm --seed 1 --check-determinism --check-determinism", "--check-determinism"},
    {"fuzz --scenario wake_storm --seeds 2 --json --json", "--json"},
    {"fuzz --scenario wake_storm --seeds 2 --shrink --shrink", "--shrink"},
    {"shrink --scenario wake_storm --seed 1 --any-failure --any-failure", "--any-failure"},
    {"run --scenario wake_storm --seed 1 --trace /tmp --save x.json", "--trace", exit_io},
};

TEST(cli_validation, every_bad_input_exits_with_its_kind_s_status_naming_its_flag) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  for (const auto& bad : bad_inputs) {
    // stderr alone through the pipe; a run that started would print to stdout.
    const output err = shell_raw(binary() + " " + bad.args + " 2>&1 >/dev/null");
    EXPECT_EQ(err.status, bad.status) << bad.args << "\n" << err.text;
    EXPECT_NE(err.text.find(bad.flag), std::string::npos) << bad.args << "\n" << err.text;
    const output out = shell_raw(binary() + " " + bad.args + " 2>/dev/null");
    EXPECT_EQ(out.text.find("outcome:"), std::string::npos) << bad.args << " ran:\n" << out.text;
    EXPECT_EQ(out.text.find("weft-sim fuzz:"), std::string::npos) << bad.args << " ran:\n" << out.text;
  }
}

// A probability that rounds to no whole ppm, however it is written, says so; one above 1 (however
// large) says the range.
TEST(cli_validation, a_fault_probability_out_of_range_says_which_way) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  for (const char* small : {"1e-9", "1e-310", "1e-400"}) {
    const std::string spec = std::string("inbox_full=") + small;
    const output err = shell_raw(binary() + " run --scenario wake_storm --seed 1 --fault " + spec + " 2>&1 >/dev/null");
    EXPECT_EQ(err.status, exit_usage) << spec;
    EXPECT_EQ(err.text, "weft-sim: --fault: " + spec +
                            ": a probability above 0 must be at least 0.0000005 (rates are whole ppm)\n");
  }
  for (const char* wrong : {"1e400", "-1e-400", "-0.5", "1.5"}) {
    const std::string spec = std::string("inbox_full=") + wrong;
    const output err = shell_raw(binary() + " run --scenario wake_storm --seed 1 --fault " + spec + " 2>&1 >/dev/null");
    EXPECT_EQ(err.status, exit_usage) << spec;
    EXPECT_EQ(err.text, "weft-sim: --fault: " + spec + ": the probability must be a finite number in [0, 1]\n");
  }
}

TEST(cli_validation, a_range_error_names_the_accepted_range) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output jobs = shell_raw(binary() + " fuzz --scenario wake_storm --seeds 2 --jobs 100000 2>&1 >/dev/null");
  EXPECT_EQ(jobs.text, "weft-sim: --jobs: 100000 is outside the accepted range [1, 256]\n");
  const output knob = shell_raw(binary() + " run --scenario shutdown_race --seed 1 --param workers=0 2>&1 >/dev/null");
  EXPECT_EQ(knob.text, "weft-sim: --param: workers=0 is outside the accepted range [1, 64]\n");
}

// /dev/full opens but refuses every write: the run happens, the lost trace is reported.
TEST(cli_validation, a_trace_that_cannot_be_written_exits_3_naming_its_flag) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  for (const char* flag : {"--trace", "--chrome-trace"}) {
    const output err =
        shell_raw(binary() + " run --scenario wake_storm --seed 1 " + flag + " /dev/full 2>&1 >/dev/null");
    EXPECT_EQ(err.status, exit_io) << flag << "\n" << err.text;
    EXPECT_EQ(err.text, std::string("weft-sim: ") + flag + ": writing '/dev/full' failed\n");
  }
}

// Output paths are checked before any run and a file is opened only when its text is written:
// a command refused for one flag leaves every file as it was; two flags naming one file are
// refused; with nothing to save an old record goes but a special file stays.
TEST(cli_validation, outputs_are_left_as_they_were_unless_written) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string dir = ::testing::TempDir() + "weft-sim-outputs";
  ASSERT_EQ(shell_raw("rm -rf " + dir + " && mkdir -p " + dir).status, 0);
  const std::string keep = dir + "/keep.txt";
  const auto contents = [](const std::string& path) { return shell_raw("cat " + path + " 2>/dev/null").text; };
  ASSERT_EQ(shell_raw("printf 'precious\\n' > " + keep).status, 0);
  const output refused = shell_raw(binary() + " run --scenario wake_storm --seed 1 --trace " + keep +
                                   " --chrome-trace /nonexistent-weft-dir/c.json 2>&1");
  EXPECT_EQ(refused.status, exit_io) << refused.text;
  EXPECT_EQ(contents(keep), "precious\n");

  const output same = shell_raw(binary() + " run --scenario wake_storm --seed 1 --chrome-trace " + keep + " --save " +
                                dir + "/./keep.txt 2>&1");
  EXPECT_EQ(same.status, exit_usage) << same.text;
  EXPECT_NE(same.text.find("--save"), std::string::npos) << same.text;
  EXPECT_EQ(contents(keep), "precious\n");

  // wake_storm passes: fuzz has nothing to save.
  const output nothing = shell_raw(binary() + " fuzz --scenario wake_storm --seeds 2 --save " + keep + " 2>&1");
  EXPECT_EQ(nothing.status, exit_pass) << nothing.text;
  EXPECT_NE(nothing.text.find("saved: nothing"), std::string::npos) << nothing.text;
  EXPECT_NE(shell_raw("test -e " + keep).status, 0) << "an earlier file stayed as if it were this campaign's record";
  const output fresh = shell_raw(binary() + " fuzz --scenario wake_storm --seeds 2 --save " + dir + "/new.json 2>&1");
  EXPECT_EQ(fresh.status, exit_pass) << fresh.text;
  EXPECT_NE(shell_raw("test -e " + dir + "/new.json").status, 0) << "a file with nothing in it was created";
  const output device = shell_raw(binary() + " fuzz --scenario wake_storm --seeds 2 --save /dev/null 2>&1");
  EXPECT_EQ(device.status, exit_pass) << device.text;
  EXPECT_EQ(shell_raw("test -c /dev/null").status, 0) << "/dev/null is gone";
  shell_raw("rm -rf " + dir);
}

// With several jobs, seeds already running when the M-th failure stops the campaign still finish;
// the report keeps the first M failures in seed order, the same at any --jobs.
TEST(cli_validation, max_failures_bounds_the_report_at_any_jobs) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const auto failures = [](const std::string& jobs) {
    const output o = shell_raw(binary() + " fuzz --scenario shutdown_race --step-budget 3000 --seeds 300 --max-failures 3 --jobs " +
                               jobs + " 2>/dev/null | grep '^fail: seed='");
    return o.text;
  };
  const std::string one = failures("1");
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 3) << one;
  for (int round = 0; round < 5; ++round) EXPECT_EQ(failures("2"), one);
}

TEST(cli_validation, the_largest_seeds_run_without_wrapping) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output fuzz = shell(binary() + " fuzz --scenario wake_storm --seeds 2 --start 18446744073709551614");
  ASSERT_EQ(fuzz.status, 0) << fuzz.text;
  EXPECT_NE(fuzz.text.find("seeds=18446744073709551614..18446744073709551615 "), std::string::npos) << fuzz.text;
  EXPECT_NE(fuzz.text.find("fuzz: 2 seeds, 0 failures"), std::string::npos) << fuzz.text;
  const output run = shell(binary() + " run --scenario wake_storm --seed 18446744073709551615");
  EXPECT_EQ(run.status, 0) << run.text;
}

TEST(cli_validation, list_shows_each_knob_with_its_range) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output list = shell(binary() + " list");
  ASSERT_EQ(list.status, 0) << list.text;
  const auto at = list.text.find("\nshutdown_race ");
  ASSERT_NE(at, std::string::npos) << list.text;
  const std::string after = list.text.substr(at);
  EXPECT_NE(after.find("--param workers          [1, 64]"), std::string::npos) << list.text;
  EXPECT_NE(after.find("--param stop_mode        [0, 3]"), std::string::npos) << list.text;
}

// A vector of 10^8 seeds is 800 MB; under a 400 MB address-space limit only a fuzz that computes
// its seeds on demand reaches its first seed. --step-budget 1 fails every seed (livelock) and
// --max-failures 1 stops after the first, so the command ends at once.
TEST(cli_validation, fuzz_does_not_materialise_its_seed_range) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit cannot be combined with sanitizer shadow memory";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "an address-space limit cannot be combined with sanitizer shadow memory";
#endif
#endif
  const std::string limited = "ulimit -v 400000 && " + binary();
  const output one = shell(limited + " fuzz --scenario wake_storm --seeds 100000000 --start 0 --step-budget 1 --max-failures 1");
  EXPECT_EQ(one.status, exit_failed) << one.text;
  EXPECT_NE(one.text.find("fail: seed=0: livelock"), std::string::npos) << one.text;
  // Per shard and per job: two workers each take the next seed of shard 3/7 (13, 20, ...).
  const output sharded = shell(limited + " fuzz --scenario wake_storm --seeds 100000000 --start 10 --shard 3/7"
                                         " --jobs 2 --step-budget 1 --max-failures 1");
  EXPECT_EQ(sharded.status, exit_failed) << sharded.text;
  EXPECT_NE(sharded.text.find("fail: seed=13: livelock"), std::string::npos) << sharded.text;
}

TEST(seed_range, computes_each_shards_seeds_without_storing_them) {
  const weft::sim::seed_range all(0, 100'000'000, 0, 1);
  EXPECT_EQ(all.size(), 100'000'000u);
  EXPECT_EQ(all.at(0), 0u);
  EXPECT_EQ(all.at(99'999'999), 99'999'999u);
  EXPECT_LE(sizeof(all), 4 * sizeof(std::uint64_t));

  // Seeds 10..59, shard 1/2: 11, 13, ..., 59.
  const weft::sim::seed_range odd(10, 50, 1, 2);
  EXPECT_EQ(odd.size(), 25u);
  EXPECT_EQ(odd.at(0), 11u);
  EXPECT_EQ(odd.at(24), 59u);
  EXPECT_EQ(odd.first(), 10u);
  EXPECT_EQ(odd.last(), 59u);

  // Every index of every shard, together, is each seed exactly once.
  std::vector<int> hits(10, 0);
  for (std::uint64_t shard = 0; shard < 3; ++shard) {
    const weft::sim::seed_range r(100, 10, shard, 3);
    for (std::uint64_t j = 0; j < r.size(); ++j) ++hits[r.at(j) - 100];
  }
  EXPECT_EQ(hits, std::vector<int>(10, 1));

  constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  const weft::sim::seed_range highest(top - 2, 3, 0, 1);
  EXPECT_EQ(highest.size(), 3u);
  EXPECT_EQ(highest.at(2), top);
  EXPECT_EQ(highest.last(), top);
  const weft::sim::seed_range everything(0, top, 0, 1);
  EXPECT_EQ(everything.size(), top);
  EXPECT_EQ(everything.at(top - 1), top - 1);
}

}  // namespace
