// Deadlock and livelock are detected and reported with each thread's blocked site.
#include <gtest/gtest.h>

#include <cstdio>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace {

TEST(deadlock, every_thread_blocked_without_a_deadline_is_reported_with_sites) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_lost_notify");
  ASSERT_NE(s, nullptr);
  const auto r = weft::sim::run(*s, 7, {});
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.failures.empty());
  const std::string& report = r.failures.front();
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  // The waiter is blocked in the condvar at its line in known_bad_scenarios.cpp; the main
  // thread in its join.
  EXPECT_NE(report.find("waiter"), std::string::npos) << report;
  EXPECT_NE(report.find("condvar.wait at known_bad_scenarios.cpp:"), std::string::npos) << report;
  EXPECT_NE(report.find("thread.join at known_bad_scenarios.cpp:"), std::string::npos) << report;
}

TEST(deadlock, a_lost_wake_in_production_code_is_reported_with_the_loop_parked) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("wake_storm_lost_wake");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    const auto r = weft::sim::run(*s, seed, {});
    if (r.passed) continue;
    const std::string& report = r.failures.front();
    std::printf("found at seed %llu:\n%s\n", static_cast<unsigned long long>(seed), report.c_str());
    EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
    EXPECT_NE(report.find("condvar.wait at parker.hpp:"), std::string::npos) << report;
    return;
  }
  FAIL() << "the lost wake was not found in 1000 seeds";
}

TEST(livelock, the_step_budget_stops_a_thread_that_never_blocks) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_spin_forever");
  ASSERT_NE(s, nullptr);
  weft::sim::options o;
  o.step_budget = 10'000;
  const auto r = weft::sim::run(*s, 1, o);
  ASSERT_FALSE(r.passed);
  EXPECT_NE(r.failures.front().find("livelock"), std::string::npos) << r.failures.front();
  EXPECT_NE(r.failures.front().find("known_bad_scenarios.cpp:"), std::string::npos) << r.failures.front();
  EXPECT_NE(r.failures.front().find("thread 1 (main): running"), std::string::npos) << r.failures.front();
  EXPECT_EQ(r.steps, o.step_budget + 1);
}

}  // namespace
