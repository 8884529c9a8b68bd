// shrink.hpp — minimising a failing case: fewer tasks and threads, fewer faults, fewer
// preemptions, while it still fails.
//
// The shrinker is generic over scenarios: it only knows the knobs a run reports.
//   * Scenario knobs: every context::param() a run asked for comes back in run_result::params
//     with the value it resolved to. Passing them back as --param reproduces the run (scenarios
//     draw their fallback whether or not it is used), so they can be lowered one at a time.
//   * Faults: a --swarm mix is first made explicit (resolve()); then each enabled kind is
//     dropped, and the rates of those that must stay are halved.
//   * Preemptions: options::max_preemptions, starting from the number the failing run made
//     (the same run), lowered towards 0. PCT's depth is lowered towards 1.
// Each candidate runs the current seed and then the next `seed_tries - 1` seeds (a smaller
// configuration usually fails under a different schedule); the first that fails with the same
// kind of failure (see failure_signature) is kept. Passes over all knobs repeat until none
// moves. Everything is a function of (scenario, seed, options, limits): the same inputs give the
// same minimal case; `max_runs` bounds the work.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>

namespace weft::sim {

struct scenario;

inline constexpr std::uint64_t min_shrink_runs = 1;  // the original run is one of them
inline constexpr std::uint64_t min_seed_tries = 1;   // the current seed itself

struct shrink_limits {
  std::uint64_t max_runs = 20'000;  // simulations the search may spend (the original run included)
  std::uint64_t seed_tries = 256;    // seeds tried per candidate: current, current + 1, ...
  std::int64_t param_floor = 1;    // knobs are not lowered below this nor below their declared min
  bool same_failure = true;        // a candidate must fail the same way (failure_signature)
};

struct failing_case {
  std::uint64_t seed = 0;
  options opts;        // explicit: every knob as --param, swarm resolved, preemptions bounded
  run_result result;   // of the run of (seed, opts)
};

struct shrink_result {
  bool reproduced = false;       // the original case fails (otherwise nothing was shrunk)
  bool made_explicit = false;    // the explicit form of the original replays it (same hash)
  failing_case original;         // the original, in explicit form when made_explicit
  failing_case minimal;          // the smallest failing case found (== original if none)
  std::uint64_t runs = 0;        // simulations spent
  bool budget_exhausted = false; // stopped by max_runs (the result may not be a fixpoint)
  std::vector<std::string> log;  // the reductions kept, in order ("tasks 9 -> 4")
};

// Throws invalid_options for a limit outside its range.
void validate(const shrink_limits& limits);

// What a failure is, for "fails the same way": the first line of the first failure, up to its
// first ':' (e.g. "deadlock", "livelock"), without digits (ids and counts may change).
std::string failure_signature(const run_result& r);

// Lowered knob by knob (validates `limits` and `o` first); `progress` (optional) is called after every simulation with the runs so
// far and the limit.
shrink_result shrink(const scenario& s, std::uint64_t seed, const options& o, const shrink_limits& limits = {},
                     const std::function<void(std::uint64_t runs, std::uint64_t limit)>& progress = {});

// The knob-by-knob comparison of two cases, one line each ("  tasks: 9 -> 4"), including the
// trace length (scheduling steps), threads, switches and preemptions.
std::vector<std::string> compare(const failing_case& before, const failing_case& after);

}  // namespace weft::sim
