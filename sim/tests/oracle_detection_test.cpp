// Each oracle catches its known-bad variant, and passes the correct scenario on the same seeds.
#include <gtest/gtest.h>

#include <cstdio>

#include <string>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace {

struct detection {
  std::uint64_t first_failing_seed = 0;
  std::string failure;
  bool found = false;
};

detection fuzz_until_failure(const char* name, std::uint64_t seeds, const weft::sim::options& o = {}) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  EXPECT_NE(s, nullptr) << name;
  detection d;
  for (std::uint64_t seed = 0; s != nullptr && seed < seeds; ++seed) {
    const auto r = weft::sim::run(*s, seed, o);
    if (r.passed) continue;
    d = {seed, r.failures.front(), true};
    std::printf("%s: first failing seed %llu (%s)\n", name, static_cast<unsigned long long>(seed),
                weft::sim::to_string(o.strategy));
    break;
  }
  return d;
}

void expect_clean(const char* name, std::uint64_t seeds) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    const auto r = weft::sim::run(*s, seed, {});
    ASSERT_TRUE(r.passed) << name << " seed " << seed << ": " << r.failures.front();
  }
}

TEST(oracles, the_timer_oracle_catches_timers_armed_early) {
  const detection d = fuzz_until_failure("timer_storm_early", 20);
  ASSERT_TRUE(d.found);
  EXPECT_NE(d.failure.find("before its deadline"), std::string::npos) << d.failure;
  expect_clean("timer_storm", 200);
}

TEST(oracles, the_submission_oracle_catches_accepted_work_stranded_at_shutdown) {
  const detection d = fuzz_until_failure("inbox_overflow_stranded", 200);
  ASSERT_TRUE(d.found);
  EXPECT_NE(d.failure.find("never ran"), std::string::npos) << d.failure;
  expect_clean("inbox_overflow", 500);
}

TEST(oracles, the_wake_storm_catches_a_lost_wake_under_both_strategies) {
  const detection random = fuzz_until_failure("wake_storm_lost_wake", 1000);
  ASSERT_TRUE(random.found);
  weft::sim::options pct;
  pct.strategy = weft::sim::strategy_kind::pct;
  const detection by_pct = fuzz_until_failure("wake_storm_lost_wake", 2000, pct);
  ASSERT_TRUE(by_pct.found);
  expect_clean("wake_storm", 500);
}

TEST(oracles, inbox_full_faults_are_injected_and_stay_within_the_oracle) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("inbox_overflow");
  ASSERT_NE(s, nullptr);
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::inbox_full)] = 200'000;
  std::uint64_t injected = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const auto r = weft::sim::run(*s, seed, o);
    ASSERT_TRUE(r.passed) << r.failures.front();
    injected += r.faults;
  }
  EXPECT_GT(injected, 0u);
}

}  // namespace

// ---- runtime scenarios (shutdown_race, cross_worker_ping_pong, blocking_saturation,
// local_domain_dispatch): each oracle's known-bad variant is caught, and the correct scenario is
// clean on the same seeds, with and without faults.
namespace {

TEST(oracles, the_task_oracle_catches_a_poll_after_completion) {
  const detection d = fuzz_until_failure("shutdown_race_finished_early", 50);
  ASSERT_TRUE(d.found);
  EXPECT_NE(d.failure.find("after it finished"), std::string::npos) << d.failure;
}

TEST(oracles, the_task_oracle_catches_a_task_that_changes_worker) {
  const detection d = fuzz_until_failure("cross_worker_ping_pong_migrate", 50);
  ASSERT_TRUE(d.found);
  EXPECT_NE(d.failure.find("changed worker"), std::string::npos) << d.failure;
}

TEST(oracles, the_ordering_oracle_catches_a_follow_up_queued_as_a_macrotask) {
  const detection d = fuzz_until_failure("local_domain_dispatch_macro_follow_up", 200);
  ASSERT_TRUE(d.found);
  EXPECT_NE(d.failure.find("ordering oracle"), std::string::npos) << d.failure;
}

TEST(oracles, runtime_scenarios_are_clean_without_faults) {
  expect_clean("shutdown_race", 300);
  expect_clean("cross_worker_ping_pong", 300);
  expect_clean("blocking_saturation", 300);
  expect_clean("local_domain_dispatch", 300);
  expect_clean("drain_race", 300);
  expect_clean("remote_wake_order", 300);
  expect_clean("abort_race", 300);
  expect_clean("placement_race", 300);
}

TEST(oracles, runtime_scenarios_are_clean_under_every_runtime_fault) {
  weft::sim::options o;
  using weft::platform::fault;
  auto rate = [&o](fault f, std::uint32_t ppm) { o.faults.rate_ppm[static_cast<std::size_t>(f)] = ppm; };
  rate(fault::spurious_wake, 100'000);
  rate(fault::duplicate_wake, 100'000);
  rate(fault::delayed_wake, 100'000);
  rate(fault::task_exception, 20'000);
  rate(fault::stop_request, 5'000);
  rate(fault::inbox_full, 50'000);
  rate(fault::blocking_saturated, 100'000);
  rate(fault::worker_start_failure, 20'000);
  std::uint64_t injected = 0;
  for (const char* name : {"shutdown_race", "cross_worker_ping_pong", "blocking_saturation", "local_domain_dispatch",
                           "drain_race", "remote_wake_order", "abort_race", "placement_race"}) {
    const weft::sim::scenario* s = weft::sim::registry::global().find(name);
    ASSERT_NE(s, nullptr);
    for (std::uint64_t seed = 0; seed < 150; ++seed) {
      const auto r = weft::sim::run(*s, seed, o);
      ASSERT_TRUE(r.passed) << name << " seed " << seed << ": " << r.failures.front();
      injected += r.faults;
    }
  }
  EXPECT_GT(injected, 0u);
}

TEST(oracles, a_failed_weft_assert_fails_the_run_not_the_process) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_assert_fails");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const auto r = weft::sim::run(*s, seed, {});
    ASSERT_FALSE(r.passed);
    EXPECT_NE(r.failures.front().find("assertion failed: sim.seed() == 0xdead at known_bad_scenarios.cpp:"),
              std::string::npos)
        << r.failures.front();
    EXPECT_NE(r.failures.front().find("asserter"), std::string::npos) << r.failures.front();
  }
}

}  // namespace
