// weft/detail/blocking_pool.hpp — threads for synchronous work, with a governed capacity.
//
// At most `max_threads` threads (started on demand, kept until shutdown) and at most `max_queued`
// callbacks waiting for one. A submission beyond that answers `full` at once; after shutdown
// began it answers `closed`. Nothing is ever queued without bound.
//
// Shutdown: admission closes first, queued callbacks are destroyed unrun (and counted), running
// ones finish, then the threads are joined. The state below is guarded by `lock_`; callbacks run
// outside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <weft/detail/runnable.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>

namespace weft::detail {

class runtime_core;

class blocking_pool {
 public:
  static constexpr std::size_t default_max_threads = 16;
  static constexpr std::size_t default_max_queued = 1'024;

  blocking_pool(std::size_t max_threads, std::size_t max_queued, runtime_core* owner);
  blocking_pool(const blocking_pool&) = delete;
  blocking_pool& operator=(const blocking_pool&) = delete;
  ~blocking_pool();

  // Any thread. On refusal the job is destroyed unrun (discard()).
  submit_result submit(runnable* job);

  // Closes admission and discards queued jobs; returns how many were discarded. Does not wait.
  std::uint64_t close();
  // Waits for running jobs and joins the threads. Call after close(), never from a pool thread.
  void join();

  std::size_t max_threads() const noexcept { return max_threads_; }
  std::size_t max_queued() const noexcept { return max_queued_; }
  // Observation for tests and stats (approximate under concurrency).
  std::size_t threads_started();
  std::size_t queued();
  std::size_t running();

 private:
  void thread_main();

  const std::size_t max_threads_;
  const std::size_t max_queued_;
  runtime_core* const owner_;
  sync::mutex lock_;
  sync::condvar work_ready_;
  std::deque<runnable*> queue_;         // under lock_; bounded by max_queued_
  std::vector<platform::thread> threads_;  // under lock_; bounded by max_threads_
  std::size_t idle_ = 0;                // under lock_: threads waiting for work
  std::size_t starting_ = 0;            // under lock_: threads started but not yet in their loop
  std::size_t running_ = 0;             // under lock_: jobs being run
  bool closed_ = false;                 // under lock_
};

// The thread is one of a runtime's blocking-pool threads (for stop()'s deadlock check).
runtime_core* current_blocking_runtime() noexcept;

}  // namespace weft::detail
