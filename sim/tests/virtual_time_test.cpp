// Virtual time: it moves only when every thread is blocked, and a long sleep costs no wall time.
#include <gtest/gtest.h>

#include <chrono>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace {

TEST(virtual_time, a_one_hour_sleep_finishes_at_once_in_wall_time) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_sleep_one_hour");
  ASSERT_NE(s, nullptr);
  const auto wall_before = std::chrono::steady_clock::now();  // seam-ok: the test measures the simulator from outside
  const auto r = weft::sim::run(*s, 1, {});
  const auto wall = std::chrono::steady_clock::now() - wall_before;  // seam-ok: simulator host code, outside any simulated run
  EXPECT_TRUE(r.passed) << (r.failures.empty() ? "" : r.failures.front());
  EXPECT_GE(r.virtual_elapsed, std::chrono::hours(1));
  EXPECT_LT(r.virtual_elapsed, std::chrono::hours(1) + std::chrono::seconds(1));
  EXPECT_LT(wall, std::chrono::seconds(1));
}

TEST(virtual_time, the_clock_jumps_are_in_the_trace) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_sleep_one_hour");
  ASSERT_NE(s, nullptr);
  weft::sim::options o;
  o.record_trace = true;
  const auto r = weft::sim::run(*s, 1, o);
  bool jumped = false;
  for (const auto& e : r.events) jumped |= e.kind == weft::sim::event_kind::time;
  EXPECT_TRUE(jumped);
}

}  // namespace
