// weft/detail/runtime_core.hpp — the shared heart of a weft::runtime.
//
// Built once by runtime::builder; afterwards `endpoints` and `pools` are immutable (published to
// the workers under `lifecycle_lock_`, before any scheduling is possible) and read without locks.
// Schedulers, builtins and runtime_operations hold a shared_ptr to the core: that keeps the
// memory, never the workers, alive — once stop is requested every submission is refused.
//
// Admission: `admitting_` is checked before every submission. request_stop() clears it first,
// then sets `stop_requested_` and notifies every worker's driver. A submission that passed the
// check concurrently still lands in a worker inbox, where it is either adopted and later
// cancelled, or found by the worker's shutdown and completed as cancelled: never lost, never run
// after refusal.
//
// Drain: close_admission() clears `admitting_` alone, and drain() then waits for the task count to
// reach zero. Each submission counts itself (task_counter::admission_hold) before it checks
// admission, so one that passed the check is in the count the drain waits on: `drained` means
// every admitted task has finished.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/detail/blocking_pool.hpp>
#include <weft/detail/loop_shared.hpp>
#include <weft/detail/task_counter.hpp>
#include <weft/detail/worker_picker.hpp>
#include <weft/event_loop.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/telemetry.hpp>
#include <weft/thread_aware.hpp>
#include <weft/thread_handle.hpp>

namespace weft {
enum class blocking_policy {
  shared,      // one pool for the whole runtime (default)
  per_worker,  // one pool per worker: one worker's blocking load cannot starve another's
};
}  // namespace weft

namespace weft::detail {

struct runtime_config {
  // Linux's largest CPU count (NR_CPUS): one worker per core always fits, and a count above it
  // is a mistake (a wrapped negative, say), not a machine.
  static constexpr std::size_t workers_max = 8'192;

  std::optional<std::size_t> workers;  // unset: platform::hardware_concurrency(); else 1..workers_max
  blocking_policy blocking = blocking_policy::shared;
  std::size_t blocking_max_threads = blocking_pool::default_max_threads;
  std::size_t blocking_max_queued = blocking_pool::default_max_queued;
  std::size_t inbox_capacity = event_loop::default_inbox_capacity;
  io_driver_choice io_driver = io_driver_choice::automatic;
  std::shared_ptr<telemetry_sink> telemetry;
  bool pin_workers = false;  // worker i runs only on the i-th allowed CPU (modulo their number)
};

class runtime_core {
 public:
  struct endpoint {
    loop_shared* shared = nullptr;  // the worker's loop (reference held by `handle`)
    thread_handle handle;
  };

  explicit runtime_core(runtime_config config);
  ~runtime_core();

  const runtime_config& config() const noexcept { return config_; }
  std::size_t worker_count() const noexcept { return endpoints_.size(); }
  const endpoint& worker(std::size_t index) const noexcept { return endpoints_[index]; }
  telemetry_sink& telemetry() const noexcept { return *config_.telemetry; }

  bool admitting() const noexcept {
    // seq_cst: an acquire pairing with the release in start() (a true answer implies the
    // endpoints are visible), and the load of the store-load pair with close_admission() that
    // lets drain() count every admitted submission (task_counter.hpp). A stale true after
    // request_stop is harmless: see the head of this file.
    return admitting_.load(std::memory_order_seq_cst);
  }
  bool stop_requested() const noexcept {
    // acquire: pairs with the release store in request_stop().
    return stop_requested_.load(std::memory_order_acquire);
  }

  // The CPU worker `index` is pinned to; nullopt when the runtime does not pin its workers.
  std::optional<unsigned> worker_cpu(std::size_t index) const noexcept {
    if (worker_cpus_.empty()) return std::nullopt;
    return worker_cpus_[index];
  }

  // A worker for spawn_anywhere (worker_picker.hpp): an idle, awake one, else round robin.
  std::size_t pick_worker() noexcept {
    // The join hint counts for this one placement only.
    const task_owner* const joined = last_joined_owner_slot::get();
    if (joined != nullptr) last_joined_owner_slot::set(nullptr);
    return picker_.pick(endpoints_.size(), placement_view{endpoints_, joined});
  }

  // The worker the calling thread is, if it is one of ours.
  std::optional<std::size_t> current_worker() const noexcept;

  // Spawns on worker `index`: directly when called on that worker, else through its inbox.
  // `work` is a task<T> or a factory of one (spawnable, event_loop.hpp).
  template <class W>
    requires spawnable<W>
  join_handle<spawn_value_t<W>> submit_task(std::size_t index, W&& work) {
    (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop racing this submission
    const endpoint& ep = endpoints_[index];
    const bool here = ep.shared->on_owner_thread();
    // A drain waits for this submission from here. On the worker itself, a task finished there
    // and not yet subtracted lends the hold its count (task_counter.hpp).
    task_counter::admission_hold hold(tasks_, here && ep.shared->take_finish_credit());
    if (!admitting()) return join_handle<spawn_value_t<W>>::rejected(queue_error::closed);
    // The task's count takes the hold over (task_counter.hpp).
    if (here && ep.shared->loop != nullptr) {
      return ep.shared->loop->spawn_work(std::forward<W>(work), &hold);
    }
    return spawn_remote(ep.shared, std::forward<W>(work), &hold);
  }

  blocking_pool& pool_for(std::size_t worker) noexcept {
    return *pools_[config_.blocking == blocking_policy::per_worker ? worker : 0];
  }

  task_counter& tasks() noexcept { return tasks_; }

  // Starts every worker; returns when all are ready. On failure, stops the started ones and
  // throws start_error.
  void start(const std::shared_ptr<runtime_core>& self);
  // Never waits; idempotent.
  void request_stop() noexcept;
  // Refuses new submissions; the workers keep running (graceful drain).
  void close_admission() noexcept {
    // seq_cst: the store of the store-load pair with the submitters' admission_hold and
    // admitting() load; drain() loads the task count after it (task_counter.hpp).
    admitting_.store(false, std::memory_order_seq_cst);
  }
  // Waits for the workers and the blocking pools (not from a worker or blocking thread).
  stop_counts wait_stopped();
  // Called from a worker or blocking thread: the threads are detached and the last worker to
  // exit closes and joins the blocking pools.
  void orphan() noexcept;

 private:
  // What worker_picker asks about the workers, for one pick.
  struct placement_view {
    static constexpr int cpu_not_asked = -2;  // current_cpu() answers -1 when it cannot tell
    const std::vector<endpoint>& workers;
    const task_owner* joined;                // compared, never dereferenced
    mutable int caller_cpu = cpu_not_asked;  // asked only once some worker is a candidate
    platform::owner_activity activity(std::size_t w) const noexcept { return workers[w].shared->driver.activity(); }
    bool joined_from(std::size_t w) const noexcept { return workers[w].shared == joined; }
    bool on_caller_cpu(std::size_t w) const noexcept {
      if (caller_cpu == cpu_not_asked) caller_cpu = platform::current_cpu();
      return caller_cpu >= 0 && workers[w].shared->driver.owner_cpu() == caller_cpu;
    }
  };

  void worker_main(const std::shared_ptr<runtime_core>& self, std::size_t index);
  void worker_exited();
  std::uint64_t close_pools();

  runtime_config config_;
  std::vector<endpoint> endpoints_;                   // immutable once admitting_
  std::vector<std::unique_ptr<blocking_pool>> pools_;  // immutable once admitting_
  std::vector<platform::thread> threads_;
  std::vector<unsigned> worker_cpus_;  // written before the workers start, then immutable

  sync::atomic<bool> admitting_{false};
  sync::atomic<bool> stop_requested_{false};
  worker_picker picker_;
  task_counter tasks_;

  // The workers' lifecycle, under lifecycle_lock_: the startup handshake, their exits, the
  // orphaning and the stop totals.
  sync::mutex lifecycle_lock_;
  sync::condvar lifecycle_cv_;
  std::vector<thread_handle> published_;
  std::size_t published_count_ = 0;
  std::size_t ready_count_ = 0;
  std::size_t exited_count_ = 0;
  bool go_ = false;
  bool abort_start_ = false;
  std::optional<std::pair<std::size_t, std::string>> pin_failure_;  // (worker, why)
  bool orphaned_ = false;
  bool pools_closed_ = false;
  stop_counts totals_{};
};

}  // namespace weft::detail
