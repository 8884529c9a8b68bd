// weft/sim/check.hpp — simulation testing inside an ordinary test program.
//
//   weft::sim::check_result r = weft::sim::check({.seeds = 500}, [](weft::sim::context& sim) {
//     ... drive weft's public API, sim.fail("...") on a broken property ...
//   });
//   if (!r.passed) std::puts(r.message().c_str());
//
// check() runs the body as a scenario for a range of seeds and stops at the first that fails. It
// then shrinks that case (docs/simulator.md, "Shrinking"), writes the failing run's Chrome trace
// and replay record, and reports a one-line reproduction: the same program with WEFT_SIM_SEED set
// runs exactly that seed again (WEFT_SIM_RECORD set to the record, that seed with its options). With GoogleTest, weft/sim/gtest.hpp's WEFT_SIM_TEST(suite, name) wraps all of it
// and fails the test with that report. A rerun of the seed that goes another way (a body with
// state outliving a run) is reported as nondeterministic, still a failure, with no reproduction.
//
// The environment overrides the code, so a CI job or a developer steers a test without editing it:
//   WEFT_SIM_SEEDS=N        how many seeds (1 .. 2^64 - 1; start + N - 1 must not pass 2^64 - 1)
//   WEFT_SIM_SEED=S         run exactly seed S (0 .. 2^64 - 1), nothing else and no shrinking
//   WEFT_SIM_STRATEGY=NAME  random | pct
//   WEFT_SIM_TRACE_DIR=DIR  where a failing run's trace goes (an existing directory; default the
//                           system's temporary directory)
//   WEFT_SIM_RECORD=FILE    run the seed and options of a record this check wrote, once, unshrunk
//                           (a record of another check or build is refused; alone, not with the
//                           three variables above it)
// A value outside those is an invalid_options naming the variable, thrown before any run.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <weft/sim/context.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/probes.hpp>
#include <weft/sim/scenario.hpp>

namespace weft::sim {

// Shrinking inside a test spends at most this many simulations by default: a test run stays
// short, and the printed reproduction does not depend on the shrinker anyway.
inline constexpr std::uint64_t check_shrink_runs_default = 2'000;

struct check_options {
  std::uint64_t seeds = 100;  // how many seeds, from `start`
  std::uint64_t start = 0;
  options sim{};              // strategy, PCT depth, faults, cores, ...
  std::vector<knob> knobs{};  // the knobs the body reads with sim.param, with their ranges
  bool shrink = true;
  std::uint64_t shrink_runs = check_shrink_runs_default;
  std::string name = "check";  // names the failing case and its trace file
  // The command that runs this check again, which the reproduction prefixes with WEFT_SIM_SEED;
  // empty: the running program's own name, quoted for the shell (shell_word). Used as given.
  std::string rerun{};
};

struct check_result {
  bool passed = true;
  std::uint64_t seeds_run = 0;
  std::uint64_t failing_seed = 0;      // when !passed
  std::vector<std::string> failures;   // of the failing run
  // False when a rerun of the failing seed (or a WEFT_SIM_RECORD replay) differs from the failing
  // run (outcome or trace hash): the body is nondeterministic, and the reproduction
  // only reruns the seed that failed once. Then !passed, and `divergence` says how it differed.
  bool reproduced = true;
  std::string divergence;
  std::string reproduction;            // "WEFT_SIM_SEED=17 ./my_tests --gtest_filter=suite.name"
  std::string trace_path;              // the failing run's Chrome trace; empty if not written
  std::string trace_error;             // why it was not written
  // The failing seed's replay record, beside the trace ("<name>-seed-<seed>.weft-sim.json"); empty
  // if not written. Its scenario is this check's body, which only this program holds.
  std::string record_path;
  std::string record_error;            // why it was not written
  std::vector<std::string> shrunk;     // the shrinker's reductions ("tasks 9 -> 4"), if any
  std::string minimal_replay;          // the shrunk case as weft-sim replay arguments
  std::string pct_bound;               // with the pct strategy: the detection bound of the seeds
                                       // run (weft/sim/confidence.hpp); empty otherwise

  probe_tally probes;                  // what the program's WEFT_SIM_PROBE sites saw, seeds run
  // Everything above as a readable report: the failures, then the reproduction line (a pass:
  // the seeds run, the PCT bound when there is one, and the probes' coverage when the program
  // has probes).
  std::string message() const;
};

// `word` as one word of a POSIX shell command: unchanged when it holds only [A-Za-z0-9_./=:+-],
// otherwise in single quotes (an embedded ' as '\''), so a path with a space reruns as printed.
std::string shell_word(std::string_view word);

// Runs `body` as described above. Throws invalid_options for an option or environment value
// outside its range (before any run).
check_result check(const check_options& o, std::function<void(context&)> body);

}  // namespace weft::sim
