// weft/stealing_pool.hpp — a pool of workers that share movable work, with priorities.
//
//   auto pool = weft::stealing_pool::builder().workers(4).build();
//   auto h = pool.spawn(weft::priority::high, []() -> weft::task<int> { co_return 42; });
//   int v = h.join().value();
//   weft::stop_outcome out = std::move(pool).stop_graceful();
//
// Unlike a runtime's pinned workers, a pool task may run each poll on a different worker: work
// spawned on a worker goes to that worker's local queue, other workers steal half of a busy
// worker's queue, and work from outside the pool goes to a global injector (docs/stealing-pool.md).
// Each worker gives the three priorities weighted opportunities (8:4:1 by default): a preference,
// not an order; `background` work keeps moving while `high` work is queued.
//
// What may go into a pool task: anything a task may touch from any thread. Objects that belong to
// one thread (an event_loop, a worker's builtins, a weft::pinned<T>) stay out: a pool task that
// reaches one gets usage_error (pinned<T>::get(), builtins::current(), event_loop's owner-thread
// checks), not a data race. Pool tasks have no timers or I/O of their own (sleep, timeout and the
// io types need an event loop and throw usage_error here); await a join_handle of a runtime or
// loop task for those. join_handle, yield_now and spawning more pool work all work as elsewhere.
//
// Shutdown mirrors the runtime: request_stop() never waits; stop() closes admission, cancels every
// unfinished task, waits, and reports (incomplete, with the count, when it cancelled anything);
// drain() closes admission and waits for every accepted task to finish; stop_graceful() is drain
// then stop. stop(), drain() and the destructor cannot wait on one of the pool's own workers:
// stop() then returns the error outcome, drain() throws usage_error, the destructor detaches.
#pragma once

#include <weft/compiler_support.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/detail/pool_core.hpp>
#include <weft/pool_stats.hpp>
#include <weft/join_handle.hpp>
#include <weft/priority.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/task.hpp>
#include <weft/telemetry.hpp>
#include <weft/time.hpp>

namespace weft {

// Relative opportunities per priority (each 1..stealing_pool::builder::weight_max).
struct priority_weights {
  std::uint32_t high = 8;
  std::uint32_t normal = 4;
  std::uint32_t background = 1;
};

class stealing_pool {
 public:
  class builder {
   public:
    static constexpr std::size_t workers_max = detail::pool_config::workers_max;
    static constexpr std::uint32_t weight_max = detail::pool_config::weight_max;
    static constexpr std::uint32_t local_burst_max = detail::pool_config::local_burst_max;

    // Number of workers, 1..workers_max; unset: one per available core.
    builder& workers(std::size_t n) noexcept {
      config_.workers = n;
      return *this;
    }
    // Opportunities per priority in each cycle of a worker's selector; each 1..weight_max.
    builder& weights(priority_weights w) noexcept {
      config_.weights = {w.high, w.normal, w.background};
      return *this;
    }
    // Local pops in a row (1..local_burst_max) after which a worker looks at the injector first.
    builder& local_burst(std::uint32_t n) noexcept {
      config_.local_burst = n;
      return *this;
    }
    // Keep the counters stats() reports (on by default; off saves a few stores per poll).
    builder& stats(bool on = true) noexcept {
      config_.stats = on;
      return *this;
    }
    builder& telemetry(std::shared_ptr<telemetry_sink> sink) noexcept {
      config_.telemetry = std::move(sink);
      return *this;
    }
    // Starts the workers. Throws usage_error for a knob out of range (naming it and the range,
    // before any thread starts) and start_error when a thread cannot be started.
    stealing_pool build() const;

   private:
    detail::pool_config config_;
  };

  stealing_pool(stealing_pool&& other) noexcept;
  stealing_pool& operator=(stealing_pool&& other) noexcept;
  stealing_pool(const stealing_pool&) = delete;
  stealing_pool& operator=(const stealing_pool&) = delete;
  ~stealing_pool();

  // Spawns a task<T> or a factory of one. After a stop or drain began: rejected (closed).
  template <class W>
    requires detail::spawnable<W>
  join_handle<detail::spawn_value_t<W>> spawn(priority p, W&& work) {
    if (core_ == nullptr) throw usage_error("spawn on a moved-from stealing_pool");
    return core_->spawn(p, std::forward<W>(work));
  }
  template <class W>
    requires detail::spawnable<W>
  join_handle<detail::spawn_value_t<W>> spawn(W&& work) {
    return spawn(priority::normal, std::forward<W>(work));
  }
  // Spawns every element of `works` (tasks or factories, moved from), in order.
  template <class Range>
  auto spawn_batch(priority p, Range&& works) {
    using W = std::decay_t<decltype(*std::begin(works))>;
    std::vector<join_handle<detail::spawn_value_t<W>>> handles;
    if constexpr (requires { works.size(); }) handles.reserve(works.size());
    for (auto& w : works) handles.push_back(spawn(p, std::move(w)));
    return handles;
  }

  // Runs `t` on the pool and blocks until it finished; returns its value or rethrows what it
  // threw (task_failed when it was cancelled or rejected). Throws usage_error on a pool worker.
  template <class T>
  T block_on(task<T> t, priority p = priority::normal) {
    check_not_on_worker("block_on");
    auto result = spawn(p, std::move(t)).join();
    if (!result) result.error().rethrow();
    if constexpr (!std::is_void_v<T>) return std::move(result).value();
  }

  std::size_t worker_count() const noexcept { return core_ ? core_->worker_count() : 0; }
  // True on one of this pool's worker threads.
  bool on_worker() const noexcept { return core_ != nullptr && core_->current_worker() != nullptr; }
  pool_stats stats() const;

  // Closes admission: later spawns are rejected. Never waits; idempotent.
  void request_stop() const noexcept;
  bool stop_requested() const noexcept;
  // Graceful: closes admission, waits until every accepted task finished or `deadline` passed.
  // Nothing is cancelled; the workers keep running. Throws usage_error on a pool worker, after
  // stop() and on a moved-from pool.
  drain_outcome drain(std::optional<duration> deadline = std::nullopt);
  // Immediate: closes admission, cancels every unfinished task, waits for them and the workers.
  // Later calls repeat the outcome of the first that waited.
  stop_outcome stop() &&;
  // drain(deadline), then stop(): what the deadline left unfinished is cancelled then.
  stop_outcome stop_graceful(std::optional<duration> deadline = std::nullopt) &&;

 private:
  explicit stealing_pool(detail::pool_core* core) noexcept : core_(core) {}
  void check_not_on_worker(const char* call) const;
  void release() noexcept;

  detail::pool_core* core_ = nullptr;  // null once moved from
  std::optional<stop_outcome> stopped_;
};

}  // namespace weft
