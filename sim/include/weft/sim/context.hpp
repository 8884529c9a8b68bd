// weft/sim/context.hpp — what a scenario receives: its seed, options, randomness and a way to
// report what it checks.
//
// All randomness a scenario uses must come from here (or from weft's seam), so the run stays a
// pure function of (scenario, seed, options). The scenario's stream is separate from the
// scheduler's and the fault plan's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>

#include <weft/platform/clock.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/random.hpp>
#include <weft/platform/source_location.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/scenario.hpp>

namespace weft::sim {

class engine;

class context {
 public:
  context(engine& e, std::uint64_t seed, const options& o, const scenario& s);
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  std::uint64_t seed() const noexcept { return seed_; }
  const options& opts() const noexcept { return options_; }
  // Whether this run injects `f` at all (after a --swarm seed picked its mix).
  bool fault_enabled(platform::fault f) const noexcept {
    return options_.faults.rate_ppm[static_cast<std::size_t>(f)] > 0;
  }

  // Uniform in [lo, hi] (inclusive), from the scenario's stream; recorded in the trace.
  std::uint64_t pick(std::uint64_t lo, std::uint64_t hi);
  bool chance(std::uint64_t numerator, std::uint64_t denominator);
  platform::random& random() noexcept { return random_; }
  // A scenario knob (options::params, `--param name=value`), or `fallback`. The run fails when
  // the scenario does not declare `name` (WEFT_SIM_SCENARIO_KNOBS) or the value lies outside
  // the declared range (run() has already rejected such a --param, so that is `fallback`).
  std::int64_t param(std::string_view name, std::int64_t fallback) const;

  // A note in the trace.
  void note(std::string_view text);
  // Records a failed check; the run goes on and is reported as failed.
  void fail(std::string_view message);
  bool failed() const noexcept;

  // Arms the `stop_request` fault (--fault stop_request=p): whenever a stop_request fault point
  // in the runtime fires, `request_stop` is called there (typically a runtime_operations'
  // request_stop). disarm_stop_requests() before whatever it refers to is destroyed.
  void arm_stop_requests(std::function<void()> request_stop);
  void disarm_stop_requests();

  // The liveness phase: faults of every kind (the runtime's, the simulated kernel's, buggify
  // sites) stop `fault_window` of virtual time from now, and the run must then reach its goal,
  // recovered(), within `recovery_bound` of virtual time, or fail as "did not recover" (also when
  // the scenario ends without reaching it). Once per run; a second call, a negative window or a
  // bound that is not positive fails the run naming the calling line.
  void start_liveness(duration fault_window, duration recovery_bound,
                      platform::source_location loc = platform::source_location::current());
  void recovered(platform::source_location loc = platform::source_location::current());

  // A crash of the simulated disk, as after the process died: every file keeps the bytes its
  // last fsync/fdatasync made durable plus a seeded number of leading sectors of what was written
  // since (none, some, or all: a torn write). Names are durable at once. Call it with no file
  // open (stop the service first), else the run fails naming the calling line; then start the
  // service again to test its recovery.
  void crash_disk(platform::source_location loc = platform::source_location::current());

  // Names the calling fiber in traces ("producer-2").
  void name_thread(std::string_view name);
  instant now() const noexcept { return platform::clock::now(); }

  // Starts a platform::thread, retrying when the fault plan injects `worker_start_failure`
  // (up to `attempts` times; then the last std::system_error propagates).
  template <class F>
  platform::thread start_thread(F fn, int attempts = 1'000) {
    for (int i = 1;; ++i) {
      try {
        return platform::thread(fn);
      } catch (const std::system_error&) {
        if (i >= attempts) throw;
        note("thread start failed; retrying");
      }
    }
  }

 private:
  engine& engine_;
  std::uint64_t seed_;
  const options& options_;
  const scenario& scenario_;
  platform::random random_;
};

}  // namespace weft::sim
