// weft/sim/run.hpp — running one scenario with one seed.
//
// run() executes the scenario on a simulator thread of the caller (an OS thread kept per calling
// thread and reused from seed to seed; Boost.Fiber's scheduler is re-installed for every run).
// A run that ends in deadlock or livelock leaves fibers that can never finish; their stacks are
// abandoned and that simulator thread is retired at exit without being joined (see runner.cpp).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <weft/platform/clock.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/trace.hpp>

namespace weft::sim {

struct scenario;

struct run_result {
  bool passed = true;
  std::vector<std::string> failures;  // oracle failures, deadlock/livelock reports, ...
  std::uint64_t trace_hash = 0;
  std::uint64_t steps = 0;            // scheduling points passed
  std::uint64_t switches = 0;         // times the running fiber changed
  std::uint64_t fibers = 0;           // fibers created
  std::uint64_t faults = 0;           // faults injected
  std::uint64_t preemptions = 0;      // switches away from a fiber that could have gone on
  // Every scenario knob the run asked for (context::param), with the value it resolved to (the
  // --param given, or the scenario's own choice). Passing them all back as --param reproduces
  // the run: scenarios draw their fallback whether or not it is used.
  std::map<std::string, std::int64_t> params;
  // WEFT_SIM_PROBE hits of this run by probe name (weft/buggify.hpp); a probe not reached is absent.
  std::map<std::string, std::uint64_t> probe_hits;
  duration virtual_elapsed{};
  std::string effective_options;      // describe() of the options after swarm choices
  std::vector<trace_event> events;    // only with options::record_trace
  std::vector<std::string> fiber_names;  // index = fiber id
  std::vector<std::uint32_t> fiber_hosts;  // index = fiber id: the host it ran on
  std::vector<std::string> host_names;     // index = host id; empty: the run added no host
};

// Throws invalid_options when `o` is outside its ranges (validate(options)), or a --param is not
// a knob `s` declares or lies outside the knob's declared range.
void validate(const scenario& s, const options& o);

// Runs `s` with `seed`; validates `o` first (validate above).
run_result run(const scenario& s, std::uint64_t seed, const options& o);

// The resident memory (VmHWM) a fuzz campaign of the built-in scenarios stays under, per process,
// at any seed count and with one or two jobs: a run's fibers, stacks and heap objects are all
// released before run() returns, so memory does not grow from seed to seed. Seeds that deadlock,
// livelock or do not recover within a liveness bound are the exception (their fibers are
// abandoned; `fuzz --max-failures` bounds them).
// campaign_memory_test checks it.
inline constexpr std::size_t campaign_resident_bytes_max = std::size_t{64} << 20;

}  // namespace weft::sim
