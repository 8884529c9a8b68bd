// properties/support/sim_case.hpp — running a property's body as one simulator run, and turning
// what the run found into a rapidcheck failure that names every seed and the replay command.
//
// A property draws a simulator seed (and whatever else it needs) with rapidcheck, then calls
// run_in_sim(seed, options, body). The body runs as the scenario of one simulator run: on fiber 1
// (the "driver"), with the runtime's workers and every helper thread as other fibers of the same
// run. Inside the run nothing may throw rapidcheck's assertion exceptions across a fiber, so a
// body reports broken expectations with sim.fail(); after the run, require_passed() turns the
// failures (and deadlock / livelock reports) into one RC_FAIL message.
//
// The scenario registry holds plain function pointers, so the body is handed over through a
// static slot. run() blocks the calling thread until its simulator thread finished the run, so
// one slot is enough (properties run one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

#include <rapidcheck.h>

#include <weft/sim/context.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "property_check.hpp"

namespace weft::properties {

namespace detail {
inline std::function<void(sim::context&)>*& body_slot() {
  static std::function<void(sim::context&)>* slot = nullptr;
  return slot;
}
inline void run_body(sim::context& sim) {
  auto* body = body_slot();
  if (body == nullptr) {
    sim.fail("property harness: no body installed");
    return;
  }
  try {
    (*body)(sim);
  } catch (const std::exception& e) {
    sim.fail(std::string("property body threw: ") + e.what());
  } catch (...) {
    sim.fail("property body threw a non-std exception");
  }
}
}  // namespace detail

// The simulator seed a property uses: WEFT_PROP_SIM_SEED pins it (to replay one schedule with
// the same generated case), else the one rapidcheck drew.
inline std::uint64_t effective_sim_seed(std::uint64_t drawn) {
  if (const char* pinned = std::getenv("WEFT_PROP_SIM_SEED")) return std::strtoull(pinned, nullptr, 10);
  return drawn;
}

inline sim::run_result run_in_sim(std::uint64_t seed, const sim::options& o,
                                  std::function<void(sim::context&)> body) {
  static const sim::scenario adhoc{"property", "a rapidcheck property body", &detail::run_body};
  detail::body_slot() = &body;
  sim::run_result r = sim::run(adhoc, seed, o);
  detail::body_slot() = nullptr;
  return r;
}

// The k-th schedule of a case whose drawn simulator seed is `drawn`: the drawn seed itself for
// k = 0, else a splitmix64 scramble of it (distinct, well spread seeds from one draw).
inline std::uint64_t case_schedule_seed(std::uint64_t drawn, std::size_t k) {
  if (k == 0) return drawn;
  std::uint64_t z = drawn + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(k);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One case run under several schedules: the first that failed (or the last, when all passed),
// with the simulator seed that gave it.
struct schedules_result {
  sim::run_result result;
  std::uint64_t sim_seed = 0;
};

// Runs one generated case under `schedules` simulator schedules (case_schedule_seed), stopping at
// the first that fails; `run_one(seed)` runs the case under one schedule and returns its
// sim::run_result. For a property whose bug shows only under some interleavings: a smaller case
// then still fails under one of its schedules, so shrinking does not depend on the single
// schedule one drawn seed happens to give that case. WEFT_PROP_SIM_SEED pins one schedule, and
// then only that one runs (the replay of a reported failure).
template <class RunOne>
schedules_result run_schedules(std::uint64_t drawn, std::size_t schedules, RunOne&& run_one) {
  schedules_result out;
  if (std::getenv("WEFT_PROP_SIM_SEED") != nullptr) {
    out.sim_seed = effective_sim_seed(drawn);
    out.result = run_one(out.sim_seed);
    return out;
  }
  for (std::size_t k = 0; k < schedules; ++k) {
    out.sim_seed = case_schedule_seed(drawn, k);
    out.result = run_one(out.sim_seed);
    if (!out.result.passed) break;
  }
  return out;
}

// run_schedules for a property body (run_in_sim).
inline schedules_result run_in_sim_schedules(std::uint64_t drawn, std::size_t schedules, const sim::options& o,
                                             const std::function<void(sim::context&)>& body) {
  return run_schedules(drawn, schedules, [&](std::uint64_t seed) { return run_in_sim(seed, o, body); });
}

// What a failing property prints besides rapidcheck's own report.
struct replay_info {
  std::uint64_t sim_seed = 0;
  std::string sim_options;     // describe(options)
  std::string replay_command;  // the exact command that replays the schedule
};

inline std::uint64_t rapidcheck_seed() { return current_rc_seed(); }

// A replay command for a property whose case is not a registered scenario: the test binary with
// the rapidcheck seed and the simulator seed pinned.
inline std::string binary_replay(std::uint64_t sim_seed) {
  return "RC_PARAMS=\"seed=" + std::to_string(rapidcheck_seed()) + " max_success=" +
         std::to_string(current_max_success()) + "\" WEFT_PROP_SIM_SEED=" +
         std::to_string(sim_seed) + " " + test_binary() + " --gtest_filter=" + current_test_filter();
}

// RC_FAILs (with every seed and the replay command) unless the run passed.
inline void require_passed(const sim::run_result& r, const replay_info& info, const std::string& what) {
  if (r.passed) return;
  std::string message = what + " failed in the simulator\n";
  for (const auto& f : r.failures) message += "  failure: " + f + "\n";
  message += "  rapidcheck seed: " + std::to_string(rapidcheck_seed()) + "\n";
  message += "  simulator seed: " + std::to_string(info.sim_seed) + " (" + info.sim_options + ")\n";
  message += "  replay: " + info.replay_command + "\n";
  RC_FAIL(message);
}

}  // namespace weft::properties
