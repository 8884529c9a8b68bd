// Determinism: a run is a pure function of (scenario, seed, options).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace {

const weft::sim::scenario& named(const char* name) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

std::vector<std::string> schedule_of(const weft::sim::run_result& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events) {
    if (e.kind == weft::sim::event_kind::run) out.push_back(e.line);
  }
  return out;
}

TEST(determinism, same_seed_gives_the_same_trace_hash_twice) {
  for (const char* name : {"wake_storm", "timer_storm", "inbox_overflow"}) {
    for (const auto strategy : {weft::sim::strategy_kind::random, weft::sim::strategy_kind::pct}) {
      weft::sim::options o;
      o.strategy = strategy;
      o.record_trace = true;
      for (std::uint64_t seed : {1u, 2u, 99u, 12345u}) {
        const auto a = weft::sim::run(named(name), seed, o);
        const auto b = weft::sim::run(named(name), seed, o);
        EXPECT_TRUE(a.passed) << name << " seed " << seed;
        EXPECT_EQ(a.trace_hash, b.trace_hash) << name << " seed " << seed;
        ASSERT_EQ(a.events.size(), b.events.size());
        for (std::size_t i = 0; i < a.events.size(); ++i) ASSERT_EQ(a.events[i].line, b.events[i].line) << i;
      }
    }
  }
}

TEST(determinism, recording_the_trace_does_not_change_the_hash) {
  weft::sim::options quiet;
  weft::sim::options recorded;
  recorded.record_trace = true;
  EXPECT_EQ(weft::sim::run(named("wake_storm"), 5, quiet).trace_hash,
            weft::sim::run(named("wake_storm"), 5, recorded).trace_hash);
}

TEST(determinism, different_seeds_give_different_schedules) {
  weft::sim::options o;
  o.record_trace = true;
  o.params["tasks"] = 8;  // the same workload: only the schedule may differ
  o.params["wakers"] = 2;
  std::set<std::uint64_t> hashes;
  std::set<std::vector<std::string>> schedules;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto r = weft::sim::run(named("wake_storm"), seed, o);
    EXPECT_TRUE(r.passed);
    hashes.insert(r.trace_hash);
    schedules.insert(schedule_of(r));
  }
  EXPECT_GE(hashes.size(), 18u);
  EXPECT_GE(schedules.size(), 18u);
}

TEST(determinism, a_deadlocked_run_does_not_disturb_later_runs) {
  weft::sim::options o;
  const auto before = weft::sim::run(named("inbox_overflow"), 3, o);
  const auto dead = weft::sim::run(named("test_lost_notify"), 1, o);
  EXPECT_FALSE(dead.passed);
  const auto after = weft::sim::run(named("inbox_overflow"), 3, o);
  EXPECT_EQ(before.trace_hash, after.trace_hash);
}

}  // namespace
