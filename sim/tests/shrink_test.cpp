// The shrinker, on known-bad variants: the shrunk case still fails the same way, replays, is no
// larger than the original in any knob and smaller in at least one; the search is deterministic.
// Then the CLI: `shrink` prints a replay command that reproduces the minimal case.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "../src/shrink.hpp"

#include "cli_support.hpp"

namespace {

using weft::sim::failing_case;
using weft::sim::options;
using weft::sim::run_result;
using weft::sim::shrink_limits;
using weft::sim::shrink_result;

const weft::sim::scenario& scenario_named(const char* name) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

std::uint64_t first_failing_seed(const weft::sim::scenario& s, const options& o, std::uint64_t limit) {
  for (std::uint64_t seed = 0; seed < limit; ++seed) {
    if (!weft::sim::run(s, seed, o).passed) return seed;
  }
  ADD_FAILURE() << s.name << ": no failing seed below " << limit;
  return 0;
}

// Every knob of `after` is at most that of `before`.
void expect_no_larger(const failing_case& before, const failing_case& after) {
  for (const auto& [name, value] : before.result.params) {
    const auto it = after.result.params.find(name);
    ASSERT_NE(it, after.result.params.end()) << name;
    EXPECT_LE(it->second, value) << name;
  }
  for (std::size_t k = 0; k < weft::sim::fault_kinds; ++k) {
    EXPECT_LE(after.opts.faults.rate_ppm[k], before.opts.faults.rate_ppm[k]) << "fault kind " << k;
  }
  EXPECT_FALSE(after.opts.swarm);
  EXPECT_LE(after.result.preemptions, before.result.preemptions);
  EXPECT_LE(after.opts.max_preemptions, before.opts.max_preemptions);
  EXPECT_LE(after.opts.pct_depth, before.opts.pct_depth);
}

bool strictly_smaller_somewhere(const failing_case& before, const failing_case& after) {
  for (const auto& [name, value] : before.result.params) {
    if (after.result.params.at(name) < value) return true;
  }
  for (std::size_t k = 0; k < weft::sim::fault_kinds; ++k) {
    if (after.opts.faults.rate_ppm[k] < before.opts.faults.rate_ppm[k]) return true;
  }
  return after.result.preemptions < before.result.preemptions || after.opts.pct_depth < before.opts.pct_depth;
}

bool is_minimal(const failing_case& c, const shrink_limits& limits) {
  for (const auto& [name, value] : c.result.params) {
    if (value > limits.param_floor) return false;
  }
  return !c.opts.faults.any() && c.result.preemptions == 0 &&
         (c.opts.strategy != weft::sim::strategy_kind::pct || c.opts.pct_depth <= 1);
}

void check_shrink(const char* name, const options& o, std::uint64_t seed_limit) {
  const auto& s = scenario_named(name);
  const std::uint64_t seed = first_failing_seed(s, o, seed_limit);
  const shrink_limits limits;
  const shrink_result r = weft::sim::shrink(s, seed, o, limits);
  ASSERT_TRUE(r.reproduced);
  ASSERT_TRUE(r.made_explicit) << "the explicit form must be the same run";
  EXPECT_FALSE(r.budget_exhausted);
  std::printf("%s seed %llu: %llu runs\n", name, static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(r.runs));
  for (const auto& line : weft::sim::compare(r.original, r.minimal)) std::printf("%s\n", line.c_str());

  // Still fails, the same way, and the minimal case replays (same trace hash).
  const run_result again = weft::sim::run(s, r.minimal.seed, r.minimal.opts);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(weft::sim::failure_signature(again), weft::sim::failure_signature(r.original.result));
  EXPECT_EQ(again.trace_hash, r.minimal.result.trace_hash);

  expect_no_larger(r.original, r.minimal);
  if (!is_minimal(r.original, limits)) {
    EXPECT_TRUE(strictly_smaller_somewhere(r.original, r.minimal));
    EXPECT_FALSE(r.log.empty());
  }

  // Deterministic: the same search finds the same case.
  const shrink_result twice = weft::sim::shrink(s, seed, o, limits);
  EXPECT_EQ(twice.minimal.seed, r.minimal.seed);
  EXPECT_EQ(twice.minimal.result.trace_hash, r.minimal.result.trace_hash);
  EXPECT_EQ(twice.runs, r.runs);
}

TEST(shrink, a_lost_wake_shrinks_to_fewer_tasks_and_preemptions) {
  check_shrink("wake_storm_lost_wake", {}, 1000);
}

TEST(shrink, a_lost_wake_found_by_pct_also_lowers_the_depth) {
  options o;
  o.strategy = weft::sim::strategy_kind::pct;
  check_shrink("wake_storm_lost_wake", o, 2000);
}

TEST(shrink, a_swarm_fault_mix_is_made_explicit_and_faults_not_needed_are_dropped) {
  options o;
  o.swarm = true;
  check_shrink("inbox_overflow_stranded", o, 200);
}

TEST(shrink, a_passing_seed_is_not_shrunk) {
  const auto& s = scenario_named("wake_storm");
  const shrink_result r = weft::sim::shrink(s, 1, {});
  EXPECT_FALSE(r.reproduced);
  EXPECT_EQ(r.runs, 1u);
}

TEST(shrink, the_preemption_bound_replays_the_unbounded_run_when_not_reached) {
  const auto& s = scenario_named("wake_storm");
  const run_result free_run = weft::sim::run(s, 7, {});
  options bounded;
  bounded.max_preemptions = free_run.preemptions;
  const run_result same = weft::sim::run(s, 7, bounded);
  EXPECT_EQ(same.trace_hash, free_run.trace_hash);
  bounded.max_preemptions = 0;
  const run_result none = weft::sim::run(s, 7, bounded);
  EXPECT_TRUE(none.passed);
  EXPECT_EQ(none.preemptions, 0u);
}

TEST(shrink, the_resolved_knobs_replay_the_run) {
  const auto& s = scenario_named("wake_storm");
  const run_result chosen = weft::sim::run(s, 11, {});
  ASSERT_FALSE(chosen.params.empty());
  options o;
  o.params = chosen.params;
  EXPECT_EQ(weft::sim::run(s, 11, o).trace_hash, chosen.trace_hash);
}

// ---- the CLI, in process (the test binary links the CLI over its own scenarios) -------------

struct captured {
  int status = -1;
  std::string out;
};

captured cli(std::vector<std::string> args) {
  args.erase(args.begin());  // the program name: testing::cli supplies it
  const weft::sim::testing::cli_output o = weft::sim::testing::cli(std::move(args));
  return {o.status, o.out};
}

std::string line_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

TEST(shrink, the_cli_prints_a_minimal_replay_that_reproduces) {
  const auto& s = scenario_named("wake_storm_lost_wake");
  const std::uint64_t seed = first_failing_seed(s, {}, 1000);
  const captured shrunk =
      cli({"weft-sim", "shrink", "--scenario", "wake_storm_lost_wake", "--seed", std::to_string(seed)});
  ASSERT_EQ(shrunk.status, 0) << shrunk.out;
  EXPECT_NE(shrunk.out.find("shrunk:\n"), std::string::npos) << shrunk.out;
  EXPECT_NE(shrunk.out.find("  trace length (steps): "), std::string::npos) << shrunk.out;
  const std::string replay = line_value(shrunk.out, "replay: ");
  ASSERT_EQ(replay.rfind("weft-sim replay --scenario wake_storm_lost_wake --seed ", 0), 0u) << shrunk.out;
  EXPECT_NE(replay.find(" --param tasks="), std::string::npos) << replay;
  EXPECT_NE(replay.find(" --preemptions "), std::string::npos) << replay;

  std::vector<std::string> args;
  std::istringstream words(replay);
  for (std::string w; words >> w;) args.push_back(w);
  const captured again = cli(args);
  EXPECT_EQ(again.status, 1) << again.out;
  EXPECT_EQ(line_value(again.out, "outcome: "), "fail");
  EXPECT_EQ(line_value(again.out, "trace-hash: "), line_value(shrunk.out, "trace-hash: ")) << again.out;
}

TEST(shrink, fuzz_with_shrink_prints_every_replay_and_shrinks_the_first_failure) {
  const captured fuzz = cli({"weft-sim", "fuzz", "--scenario", "wake_storm_lost_wake", "--seeds", "300", "--shrink",
                             "--max-failures", "3"});
  EXPECT_EQ(fuzz.status, 1) << fuzz.out;
  std::size_t fails = 0;
  std::size_t replays = 0;
  for (std::size_t at = 0; (at = fuzz.out.find("\nfail: seed=", at)) != std::string::npos; ++at) ++fails;
  for (std::size_t at = 0; (at = fuzz.out.find("\n  replay: weft-sim replay ", at)) != std::string::npos; ++at) {
    ++replays;
  }
  EXPECT_GE(fails, 1u) << fuzz.out;
  EXPECT_EQ(fails, replays) << fuzz.out;
  EXPECT_NE(fuzz.out.find("fuzz: shrinking the first failure"), std::string::npos) << fuzz.out;
  EXPECT_NE(fuzz.out.find("\nreplay: weft-sim replay "), std::string::npos) << fuzz.out;
  EXPECT_NE(fuzz.out.find("\nstats: steps="), std::string::npos) << fuzz.out;
}

}  // namespace
