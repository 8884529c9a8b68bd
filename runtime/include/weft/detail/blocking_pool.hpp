// weft/detail/blocking_pool.hpp — threads for synchronous work, with a governed capacity.
//
// At most `max_threads` threads (started on demand, kept until shutdown) and at most `max_queued`
// callbacks waiting for one. A submission beyond that answers `full` at once; after shutdown
// began it answers `closed`. Nothing is ever queued without bound.
//
// Shutdown: admission closes first, queued callbacks are destroyed unrun (and counted), running
// ones finish, then the threads are joined. The admission, queue and shutdown protocol and the
// state the threads share are blocking_admission's (blocking_admission.hpp, checked by a model);
// this class starts and joins the threads. Callbacks run outside the lock.
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/detail/blocking_admission.hpp>
#include <weft/detail/runnable.hpp>
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

  std::size_t max_threads() const noexcept { return admission_.max_threads(); }
  std::size_t max_queued() const noexcept { return admission_.max_queued(); }
  // Observation for tests and stats (approximate under concurrency).
  std::size_t threads_started();
  std::size_t queued();
  std::size_t running();

 private:
  void thread_main();

  runtime_core* const owner_;
  blocking_admission admission_;
};

// The thread is one of a runtime's blocking-pool threads (for stop()'s deadlock check).
runtime_core* current_blocking_runtime() noexcept;

}  // namespace weft::detail
