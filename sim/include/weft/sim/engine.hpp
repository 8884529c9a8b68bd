// weft/sim/engine.hpp — one simulation run: fibers, the seeded scheduler, virtual time, the
// trace, deadlock and livelock detection.
//
// How a run is driven (all on one OS thread):
//   * Every simulated thread is a detached Boost.Fiber fiber with a fiber_record here. Its id is
//     its creation rank (the scenario's fiber is 1), so ids mean the same in every run.
//   * engine_algorithm (engine.cpp) is installed with use_scheduling_algorithm for the run; its
//     pick_next() returns the engine's choice. The engine keeps the ready fibers in arrival
//     order (a vector), so the candidates at every choice are a function of the run alone.
//   * At a yield point the strategy chooses among the ready fibers *and* the caller; choosing
//     the caller costs nothing (no switch). Choosing another makes it `forced_` and yields.
//   * A blocked fiber waits on a wait_list (and, with a deadline, in the virtual timer heap).
//     When no fiber is ready, Boost.Fiber's dispatcher calls suspend_until(): then the engine
//     jumps virtual time to the earliest live deadline and wakes those fibers, or — with none —
//     reports a deadlock with each blocked fiber's site and ends the run.
//   * The OS thread's main context waits in execute() and is woken when the last fiber
//     exits or the run is aborted (deadlock, livelock). An aborted run's fibers are never
//     resumed again; `poisoned()` tells the runner that this OS thread now carries them.
//   * Before execute() returns, the main context yields once to Boost.Fiber's dispatcher, the only
//     place that frees finished fibers and their stacks, so no run leaves its fibers to the next.
//
// Random streams (all split from the seed with splitmix64): schedule, fault, scenario, entropy,
// swarm. Separate streams keep, for example, a scenario's picks from shifting the schedule.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <weft/platform/source_location.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <weft/platform/clock.hpp>
#include <weft/platform/random.hpp>
#include <weft/sim/hooks.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/trace.hpp>

namespace boost::fibers {
class context;
}

namespace weft::sim {

class strategy;
namespace io {
class world;
}  // namespace io

namespace detail {

enum class fiber_state : std::uint8_t { ready, running, blocked, finished, abandoned };

struct fiber_record {
  std::uint64_t id = 0;
  std::string name;
  boost::fibers::context* ctx = nullptr;
  fiber_state state = fiber_state::ready;
  // While blocked:
  const char* block_op = "";
  weft::platform::source_location block_site{};
  wait_list* waiting_on = nullptr;
  std::uint64_t block_generation = 0;  // timer entries of earlier waits are stale
  wake_reason reason = wake_reason::notified;
  bool has_deadline = false;
  instant deadline{};
  // Lifecycle:
  wait_list joiners;
  bool joined_or_detached = false;
  std::vector<void*> slots;
  std::uint64_t priority = 0;  // PCT
  // The simulated host it runs on (inherited from its creator) and that host's incarnation then.
  std::uint32_t host = 0;
  std::uint32_t incarnation = 0;
  std::optional<host_tag> spawn_on;  // where its next spawn goes, if not its own host
  // Its stack, and AddressSanitizer's fake stack while it is switched out (fiber_sanitizer.hpp).
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* sanitizer_fake_stack = nullptr;
};

}  // namespace detail

class engine {
 public:
  engine(std::uint64_t seed, const options& o);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // The run active on this OS thread, or null.
  static engine* current() noexcept;

  // ---- run control (main context of the OS thread) ---------------------------------------
  // Installs the scheduling algorithm, starts `root` as fiber 1, waits until every fiber
  // finished or the run was aborted, and restores Boost.Fiber's default algorithm.
  void execute(std::function<void()> root);
  run_result result() &&;
  bool poisoned() const noexcept { return aborted_; }

  // ---- hooks (fibers) ----------------------------------------------------------------------
  void yield_point(const char* op, const weft::platform::source_location& loc, bool explicit_yield) noexcept;
  detail::wake_reason wait(detail::wait_list& list, const char* op, const weft::platform::source_location& loc,
                           const instant* deadline);
  std::size_t notify_one(detail::wait_list& list) noexcept;
  std::size_t notify_all(detail::wait_list& list) noexcept;
  detail::fiber_record* spawn(std::function<void()> fn, const weft::platform::source_location& loc);
  // The running fiber's next spawn starts on `host` at `incarnation` instead of its own.
  void spawn_next_on(std::uint32_t host, std::uint32_t incarnation) noexcept {
    if (running_ != nullptr) running_->spawn_on = detail::host_tag{host, incarnation};
  }
  // Takes that back (the start failed), so the fiber's later spawns stay on its own host.
  void forget_next_spawn() noexcept {
    if (running_ != nullptr) running_->spawn_on.reset();
  }
  void join(detail::fiber_record* f, const weft::platform::source_location& loc);
  void detach(detail::fiber_record* f) noexcept;
  void drop_joinable(detail::fiber_record* f) noexcept;
  bool fault_point(std::uint8_t kind, const char* name, const weft::platform::source_location& loc) noexcept;
  // The fault stream without a scheduling point, for the simulated kernel (hooks.hpp).
  bool io_fault(std::uint8_t kind, const char* name) noexcept;
  std::uint64_t fault_draw(std::uint64_t bound) noexcept;
  // User code's fault sites and probes (hooks.hpp): neither is a scheduling point.
  bool buggify(std::string_view name) noexcept;
  void probe_hit(const platform::probe_site& site) noexcept;
  // The run's simulated kernel, created at its first use; it dies with the engine.
  io::world& io_world();
  io::world* existing_io_world() noexcept { return io_world_.get(); }
  // A task event (platform::task_event) of the task cell at `cell`: recorded in the trace, never a
  // scheduling point (no step, no choice). Ignored while no fiber runs.
  void trace_task(std::uint8_t event, const char* name, const void* cell, std::uint64_t id,
                  const char* detail) noexcept;
  void fail(std::string message);
  // A WEFT_ASSERT failed on the running fiber: the run fails with the condition and site, and is
  // aborted like a deadlock (every fiber abandoned, this one included). Never returns.
  [[noreturn]] void assertion_failed(const char* condition, const char* file, int line) noexcept;
  // An oracle's broken invariant that leaves memory nobody may touch (hooks.hpp stop_run): the run
  // fails with `message` and is aborted like a failed assertion. Never returns.
  [[noreturn]] void stop_run(std::string message) noexcept;
  // Arms the `stop_request` fault: when a stop_request fault point fires, `hook` is called (on
  // the fiber at that point; re-entry is suppressed). The scenario owns what the hook refers to
  // and disarms it (an empty function) before that goes away.
  void arm_stop_request(std::function<void()> hook) { stop_hook_ = std::move(hook); }
  bool failed() const noexcept { return !failures_.empty(); }
  // The liveness phase (context::start_liveness): every fault kind stops at `fault_window` from
  // now, and the run must reach its goal (recovered()) within `recovery_bound` after that.
  void start_liveness(duration fault_window, duration recovery_bound, const weft::platform::source_location& loc);
  void recovered(const weft::platform::source_location& loc);
  // context::crash_disk: the simulated disk loses what was not synced.
  void crash_disk(const weft::platform::source_location& loc);
  // False once the liveness phase's fault window has closed: no fault of any kind is drawn after.
  bool faults_open() const noexcept { return now_ < faults_until_; }
  void note(std::string text);
  // Trace events of the simulated world (trace.hpp: event_kind::world and ::message).
  void world_event(std::string text);
  void message_event(bool arrival, std::uint64_t id, std::uint32_t host, std::string text);
  // The name traces give host `id` (its process in the Chrome trace).
  void name_host(std::uint32_t id, std::string name);
  void name_current(std::string name);
  // A scenario knob resolved to `value` (reported in run_result::params; not in the trace).
  void record_param(std::string name, std::int64_t value);

  std::uint64_t current_fiber_id() const noexcept { return running_ ? running_->id : 0; }
  detail::fiber_record* running() const noexcept { return running_; }
  instant now() const noexcept { return now_; }
  unsigned cores() const noexcept { return options_.cores; }
  std::uint64_t entropy() noexcept { return entropy_rng_.next(); }
  platform::random& scenario_random() noexcept { return scenario_rng_; }
  const options& opts() const noexcept { return options_; }
  std::uint64_t seed() const noexcept { return seed_; }

  // ---- the scheduling algorithm's side (engine.cpp) ----------------------------------------
  void on_awakened(boost::fibers::context* ctx, detail::fiber_record* f) noexcept;
  boost::fibers::context* pick_next() noexcept;
  bool has_ready() const noexcept;
  void on_idle() noexcept;
  detail::fiber_record* take_pending_spawn(boost::fibers::context* ctx) noexcept;

  // The virtual epoch every run starts at.
  static instant epoch() noexcept;

 private:
  struct timer_entry {
    instant deadline;
    std::uint64_t sequence;
    detail::fiber_record* fiber;
    std::uint64_t generation;
  };
  static bool later(const timer_entry& a, const timer_entry& b) noexcept;

  void record(trace_event e);
  void record_simple(event_kind kind, std::uint64_t fiber, std::uint64_t other, std::int64_t value,
                     const char* op, const weft::platform::source_location* loc, std::string text = {});
  void wake(detail::fiber_record* f, detail::wake_reason why) noexcept;
  void switch_to(detail::fiber_record* f) noexcept;
  // pick_next()'s answer `to` (the fiber `next`, or null for the main or dispatcher context),
  // announced to AddressSanitizer; and the arrival of the context that runs again after a switch.
  boost::fibers::context* announce_switch(boost::fibers::context* to, detail::fiber_record* next) noexcept;
  void arrived() noexcept;
  void fiber_main(detail::fiber_record* f, std::function<void()>& fn) noexcept;
  void fiber_exited(detail::fiber_record* f) noexcept;
  void release_finished_fibers() noexcept;
  void abort_run() noexcept;
  [[noreturn]] void abandon_current() noexcept;
  void record_task(std::uint64_t task, std::uint64_t id, std::uint8_t event, const char* name,
                   const char* detail);
  std::string describe_fibers() const;
  std::int64_t now_ns() const noexcept;
  void choose_swarm_faults();

  std::uint64_t seed_;
  options options_;
  platform::random schedule_rng_;
  platform::random fault_rng_;
  platform::random scenario_rng_;
  platform::random entropy_rng_;
  std::unique_ptr<strategy> strategy_;

  std::deque<detail::fiber_record> fibers_;        // index = id - 1; stable addresses
  std::vector<detail::fiber_record*> ready_;       // arrival order
  detail::fiber_record* running_ = nullptr;
  detail::fiber_record* forced_ = nullptr;
  detail::fiber_record* pending_spawn_ = nullptr;
  detail::fiber_record* last_run_ = nullptr;
  boost::fibers::context* dispatcher_ready_ = nullptr;
  boost::fibers::context* main_ready_ = nullptr;
  boost::fibers::context* main_ctx_ = nullptr;
  // The main context's and the dispatcher's fake-stack slots, and whether pick_next() announces
  // switches to AddressSanitizer (only while the run's algorithm switches; fiber_sanitizer.hpp).
  void* main_fake_stack_ = nullptr;
  void* dispatcher_fake_stack_ = nullptr;
  bool announce_switches_ = false;
  std::vector<timer_entry> timers_;                // min-heap by (deadline, sequence)
  std::uint64_t timer_sequence_ = 0;
  std::uint64_t live_ = 0;
  bool ending_ = false;
  bool aborted_ = false;
  bool main_waiting_ = false;

  instant now_;
  std::uint64_t steps_ = 0;
  std::uint64_t switches_ = 0;
  std::uint64_t faults_injected_ = 0;
  std::uint64_t preemptions_ = 0;
  std::map<std::string, std::int64_t> params_;
  fnv1a hash_;
  std::vector<trace_event> events_;
  std::vector<std::string> failures_;
  std::string effective_options_;
  engine* previous_ = nullptr;
  std::function<void()> stop_hook_;
  bool in_stop_hook_ = false;
  std::unique_ptr<io::world> io_world_;
  std::vector<std::string> host_names_;  // index = host id; empty until a host is added
  // The liveness phase: faults stop at faults_until_; the goal is due by recover_by_.
  instant faults_until_ = instant::max();
  std::optional<instant> recover_by_;
  bool recovered_ = false;
  // Buggify sites met in this run and whether each is active; probe hits by site. Looked up only:
  // result() folds the hits into a map by name, a sum that no visiting order changes.
  std::unordered_map<std::string, bool> buggify_sites_;
  std::unordered_map<const platform::probe_site*, std::uint64_t> probe_hits_;

  // Task events: a cell's address names it only inside the engine (it never enters the trace);
  // the trace numbers tasks in order of appearance. A `spawned` event always starts a new number
  // (the address of a freed cell may be reused by the next one).
  struct task_record {
    std::uint64_t number = 0;
    const char* outcome = nullptr;  // static string from the runtime's `outcome` event
    bool completed = false;
  };
  std::unordered_map<const void*, task_record> tasks_;  // looked up only, never iterated
  std::uint64_t task_count_ = 0;
};

}  // namespace weft::sim
