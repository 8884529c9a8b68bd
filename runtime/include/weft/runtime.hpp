// weft/runtime.hpp — N pinned workers, each an OS thread driving its own event_loop.
//
//   auto rt = weft::runtime::builder().workers(4).blocking(weft::blocking_policy::shared).build();
//   auto h = rt.scheduler().spawn_anywhere([]() -> weft::task<int> { co_return 42; });
//   weft::stop_outcome out = std::move(rt).stop();
//
// Startup publishes every worker's endpoint before any scheduling is possible; build() returns
// only when every worker is ready, and throws start_error (after stopping the workers it did
// start) if a thread cannot be started.
//
// Shutdown: request_stop() never waits and is idempotent. stop() ends the runtime, waits and
// reports: complete, incomplete (with what was cancelled or discarded), or error when called from
// one of the runtime's workers or blocking callbacks (then it requests the stop but cannot wait,
// and leaves the runtime as it was: a later stop() on a thread that can wait reports the real
// outcome). The destructor requests and waits, except in those contexts, where it detaches. Shutdown closes admission first
// (later submissions are rejected and their factories never run), cancels unfinished tasks on
// their own worker, destroys queued blocking callbacks unrun and lets running ones finish.
// drain() is the graceful variant: admission closes and it waits for every accepted task and
// blocking callback to finish, up to an optional deadline; a deadline alone never aborts anything.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <weft/builtins.hpp>
#include <weft/detail/runtime_core.hpp>
#include <weft/join_error.hpp>
#include <weft/runtime_operations.hpp>
#include <weft/scheduler.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/task.hpp>

namespace weft {

// A runtime could not start: `worker` names the thread that failed.
class start_error : public std::runtime_error {
 public:
  start_error(std::size_t worker, const std::string& why)
      : std::runtime_error("weft runtime: worker " + std::to_string(worker) + " failed to start: " + why),
        worker_(worker) {}
  std::size_t worker() const noexcept { return worker_; }

 private:
  std::size_t worker_;
};

class runtime {
 public:
  class builder {
   public:
    static constexpr std::size_t workers_max = detail::runtime_config::workers_max;

    // Number of workers, 1 to workers_max; left unset, one per available core. build() throws
    // usage_error, naming the value and the range, for a count outside it (0 included).
    builder& workers(std::size_t n) noexcept {
      config_.workers = n;
      return *this;
    }
    builder& blocking(blocking_policy policy) noexcept {
      config_.blocking = policy;
      return *this;
    }
    // Per pool: at most `max_threads` threads and `max_queued` waiting callbacks (both >= 1;
    // build() throws usage_error, naming the values, otherwise).
    builder& blocking_capacity(std::size_t max_threads, std::size_t max_queued) noexcept {
      config_.blocking_max_threads = max_threads;
      config_.blocking_max_queued = max_queued;
      return *this;
    }
    builder& telemetry(std::shared_ptr<telemetry_sink> sink) noexcept {
      config_.telemetry = std::move(sink);
      return *this;
    }
    // Pins each worker thread to one CPU: worker i runs only on the i-th CPU the building thread
    // may use (its affinity mask; modulo their number when there are more workers than CPUs).
    // Off by default: the kernel then places the workers, and may for a while put two of them on
    // one CPU (docs/runtime.md). Pinning suits a process that owns its CPUs; two pinned runtimes
    // in one process share the same first CPUs. build() throws start_error if the OS refuses.
    builder& pin_workers(bool on = true) noexcept {
      config_.pin_workers = on;
      return *this;
    }
    // Capacity of each worker's remote inbox (>= 1; build() throws usage_error otherwise).
    builder& inbox_capacity(std::size_t n) noexcept {
      config_.inbox_capacity = n;
      return *this;
    }
    // The I/O driver of every worker's loop (event_loop::options::io_driver). Forcing io_uring
    // where it is unavailable makes build() throw start_error.
    builder& io_driver(io_driver_choice choice) noexcept {
      config_.io_driver = choice;
      return *this;
    }
    // Starts the workers; returns once all are ready. Throws usage_error for a knob out of
    // range (before any thread starts) and start_error. A builder may build any number of
    // runtimes; each has its own workers.
    runtime build() const;

   private:
    detail::runtime_config config_;
  };

  // The moved-from runtime owns nothing: its stop() is complete, and calls that need workers
  // throw usage_error saying it was moved from.
  runtime(runtime&& other) noexcept;
  runtime& operator=(runtime&& other) noexcept;
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  ~runtime();

  // Places work on a worker the runtime picks.
  weft::scheduler scheduler() const noexcept { return weft::scheduler(core_, scheduler::any_worker); }
  // The scheduler of worker `index` (submits to that worker from anywhere). After stop() it
  // answers like every scheduler then: rejected, closed.
  weft::scheduler worker_scheduler(std::size_t index) const;
  runtime_operations operations() const noexcept { return runtime_operations(core_); }
  // The number of workers it was built with (after stop() too); 0 once moved from.
  std::size_t worker_count() const noexcept { return core_ ? core_->worker_count() : 0; }
  // The CPU worker `index` is pinned to (builder::pin_workers), or nullopt when not pinned.
  std::optional<unsigned> worker_cpu(std::size_t index) const;

  void request_stop() const noexcept;
  bool stop_requested() const noexcept;

  // Graceful: closes admission, then waits until every accepted task and blocking callback has
  // finished (or `deadline` passed). The runtime keeps running either way; nothing is aborted.
  // Throws usage_error on a worker or blocking callback (it would deadlock), after stop() and on
  // a moved-from runtime.
  drain_outcome drain(std::optional<duration> deadline = std::nullopt);
  // Waits and reports. See the head of this file. Once a stop() has waited, later calls on the
  // same object return its outcome; a refused stop (error) records nothing.
  stop_outcome stop() &&;
  // drain(deadline), then stop(): whatever the deadline left unfinished is cancelled then.
  stop_outcome stop_graceful(std::optional<duration> deadline = std::nullopt) &&;

  // Runs `t` on a worker and blocks the calling thread until it finished; returns its value or
  // rethrows what it threw (task_failed if it was cancelled or rejected). `t` may borrow the
  // caller's locals: its frame is destroyed on the worker before block_on returns or throws.
  // Throws usage_error on a worker of this runtime (it would block the worker), after stop() and
  // on a moved-from runtime, each saying which.
  template <class T>
  T block_on(task<T> t) {
    return block_on_work(std::move(t));
  }
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto block_on(F&& factory) {
    return block_on_work(std::forward<F>(factory));
  }

 private:
  explicit runtime(std::shared_ptr<detail::runtime_core> core) noexcept : core_(std::move(core)) {}
  void check_block_on_caller() const;
  template <class W>
  detail::spawn_value_t<W> block_on_work(W&& work) {
    using T = detail::spawn_value_t<W>;
    check_block_on_caller();
    join_handle<T> h = core_->submit_task(core_->pick_worker(), std::forward<W>(work));
    auto result = h.join();
    if (!result) result.error().rethrow();
    if constexpr (!std::is_void_v<T>) return std::move(result).value();
  }
  // Throws usage_error naming the state when this runtime cannot run work: stopped or moved from.
  void check_running(const char* call) const;
  void shut_down_and_wait() noexcept;

  // Null only once moved from; a stopped runtime keeps its core, so that its schedulers,
  // operations and counts go on answering for the runtime it was.
  std::shared_ptr<detail::runtime_core> core_;
  std::optional<stop_outcome> stopped_;  // what the stop() that waited reported; later calls repeat it
};

}  // namespace weft
