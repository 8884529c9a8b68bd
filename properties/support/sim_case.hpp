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
