// weft/sim/context.hpp — what a scenario receives: its seed, options, randomness and a way to
// report what it checks.
//
// All randomness a scenario uses must come from here (or from weft's seam), so the run stays a
// pure function of (scenario, seed, options). The scenario's stream is separate from the
// scheduler's and the fault plan's.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <weft/platform/clock.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/random.hpp>
#include <weft/platform/source_location.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/host.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/scenario.hpp>

namespace weft::sim {

class engine;
namespace detail {
class host_table;
}  // namespace detail

class context {
 public:
  context(engine& e, std::uint64_t seed, const options& o, const scenario& s);
  ~context();
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

  // ---- hosts and the network between them (weft/sim/host.hpp) -------------------------------
  // Every call below that names a host this run does not have, cuts a host off from itself,
  // boots a running host or stops one that is not running fails the run as a usage error naming
  // the calling line, and changes nothing.

  // The host the scenario's own threads run on ("main", id 0).
  const host& this_host() const noexcept;
  // A new host, with the next network address (10.0.0.2 for the first); nullopt on a usage error
  // (an empty or taken name, more than 253 hosts).
  std::optional<host> add_host(std::string_view name,
                               platform::source_location loc = platform::source_location::current());
  // Starts a new incarnation of `h`'s software: `main` runs on a thread of that host, with the
  // disk as the last incarnation left it (after a crash: as last synced).
  void boot(const host& h, std::function<void(host_process&)> main,
            platform::source_location loc = platform::source_location::current());
  // Crashes `h` at once: its descriptors close (connections reset, nothing flushed; a peer behind
  // a cut or held link stays half-open until the link opens), its disk
  // loses what was not synced, every later call of its old threads fails EIO; then its process's
  // on_crash hook runs and the crash waits for its main to return. boot() restarts it.
  void crash(const host& h, platform::source_location loc = platform::source_location::current());
  // Stops `h` gracefully: its process's on_shutdown hook runs, then this waits for its main.
  // Neither stops the scenario's own host ("main") nor is called from a thread of `h` itself:
  // both fail the run as usage errors.
  void shutdown(const host& h, platform::source_location loc = platform::source_location::current());
  bool running(const host& h) const;
  // A thread on host `h` (a client process there, say), retried as start_thread; it lives in
  // the host's current incarnation, so a crash of `h` cuts it off too.
  template <class F>
  platform::thread start_on(const host& h, F fn, platform::source_location loc = platform::source_location::current()) {
    if (!place_next_spawn(h, loc)) return {};
    try {
      return start_thread(std::move(fn));  // the placement holds until a start succeeds
    } catch (...) {
      forget_next_spawn();  // every start failed: the caller's next thread stays on its host
      throw;
    }
  }
  // Partitions: a cut direction loses datagrams and holds stream bytes and connects until
  // repaired. Two-way, or from -> to only.
  void partition(const host& a, const host& b, platform::source_location loc = platform::source_location::current());
  void partition_one_way(const host& from, const host& to,
                         platform::source_location loc = platform::source_location::current());
  void repair(const host& a, const host& b, platform::source_location loc = platform::source_location::current());
  void repair_one_way(const host& from, const host& to,
                      platform::source_location loc = platform::source_location::current());
  // Holds every message between `a` and `b` (both ways) in flight until released: a stalled peer.
  void hold(const host& a, const host& b, platform::source_location loc = platform::source_location::current());
  void release(const host& a, const host& b, platform::source_location loc = platform::source_location::current());
  // Each message between `a` and `b` takes a latency drawn uniformly from [low, high] (both
  // ways; 100 us to 2 ms until set; high at most 60 s): a slow peer.
  void set_latency(const host& a, const host& b, duration low, duration high,
                   platform::source_location loc = platform::source_location::current());
  // Resets every TCP connection between `a` and `b`: both ends fail ECONNRESET. How many.
  std::size_t reset_connections(const host& a, const host& b,
                                platform::source_location loc = platform::source_location::current());
  // The scenario returned (the runner calls this): hosts still running are crashed.
  void end_of_scenario();

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
  bool place_next_spawn(const host& h, const platform::source_location& loc);
  void forget_next_spawn() noexcept;
  detail::host_table& hosts();

  engine& engine_;
  std::uint64_t seed_;
  const options& options_;
  const scenario& scenario_;
  platform::random random_;
  std::unique_ptr<detail::host_table> hosts_;  // created at the first host call
};

}  // namespace weft::sim
