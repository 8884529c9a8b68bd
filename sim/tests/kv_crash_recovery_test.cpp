// kv_crash_recovery_test.cpp — the kv_crash_recovery scenario against the key-value example: the
// correct server passes under crashes, partitions, holds and resets, with and without the fault
// plan's swarm mixes, under random and PCT schedules; the known-bad server that acknowledges before
// fdatasync is caught within 1,000 seeds, its failure shrinks, and the shrunk case replays with the
// same trace hash.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "../src/shrink.hpp"

namespace {

// The seeds within which the known-bad server must be caught.
constexpr std::uint64_t catch_within = 1'000;

const weft::sim::scenario& kv_scenario() {
  const weft::sim::scenario* s = weft::sim::registry::global().find("kv_crash_recovery");
  EXPECT_NE(s, nullptr);
  return *s;
}

TEST(kv_crash_recovery, the_correct_server_loses_no_acknowledged_write) {
  weft::sim::options swarm;
  swarm.swarm = true;
  weft::sim::options pct_swarm = swarm;
  pct_swarm.strategy = weft::sim::strategy_kind::pct;
  for (const weft::sim::options& o : {weft::sim::options{}, swarm, pct_swarm}) {
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      const weft::sim::run_result r = weft::sim::run(kv_scenario(), seed, o);
      ASSERT_TRUE(r.passed) << "seed " << seed << " " << weft::sim::describe(o) << ": " << r.failures.front();
    }
  }
}

TEST(kv_crash_recovery, a_server_that_acknowledges_before_fsync_is_caught_shrunk_and_replayed) {
  weft::sim::options bad;
  bad.params["ack_before_fsync"] = 1;
  std::uint64_t seed = 0;
  weft::sim::run_result first;
  for (; seed < catch_within; ++seed) {
    first = weft::sim::run(kv_scenario(), seed, bad);
    if (!first.passed) break;
  }
  ASSERT_LT(seed, catch_within) << "the known-bad server was not caught";
  ASSERT_FALSE(first.failures.empty());
  EXPECT_NE(first.failures.front().find("an acknowledged write was lost"), std::string::npos) << first.failures.front();
  std::printf("caught at seed %llu: %s\n", static_cast<unsigned long long>(seed), first.failures.front().c_str());

  const weft::sim::shrink_result s = weft::sim::shrink(kv_scenario(), seed, bad);
  ASSERT_TRUE(s.reproduced);
  ASSERT_TRUE(s.made_explicit);
  for (const auto& line : weft::sim::compare(s.original, s.minimal)) std::printf("%s\n", line.c_str());
  EXPECT_EQ(s.minimal.result.params.at("ack_before_fsync"), 1);
  const weft::sim::run_result again = weft::sim::run(kv_scenario(), s.minimal.seed, s.minimal.opts);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.trace_hash, s.minimal.result.trace_hash);
  EXPECT_EQ(weft::sim::failure_signature(again), weft::sim::failure_signature(first));
}

}  // namespace
