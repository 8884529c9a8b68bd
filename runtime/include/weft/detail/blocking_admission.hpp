// weft/detail/blocking_admission.hpp — the blocking pool's admission, queue and shutdown protocol.
//
// blocking_pool (blocking_pool.hpp) owns the threads; this class owns everything they share,
// guarded by one lock: the queue of waiting callbacks, the thread count and the idle / starting /
// running counts, and the `closed` flag. It is a header so the model flavor checks the very code
// the pool runs (models/src/blocking_pool_model.cpp); starting a thread is the caller's part.
//
// Admission (submit): after close() began, `closed`. Otherwise the job is queued, unless no thread
// will take it (no idle or starting thread is free for it, the pool is at `max_threads`) and
// `max_queued` jobs already wait: then `full`. A refused job is destroyed unrun (discard()).
// When no thread is free and the pool may grow, a thread is started for the job; if none can be
// started, the job waits for an existing thread within the same max_queued bound.
//
// Shutdown (close): under the lock admission closes and the queue is taken; the taken jobs are
// discarded outside it. Since submit checks `closed` under the same lock, a job is either queued
// before the close (and then run by a pool thread, or discarded by the close) or refused; nothing
// is accepted once close() returned. Running jobs finish; threads leave serve() when the pool is
// closed and the queue empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <system_error>
#include <utility>
#include <vector>

#include <weft/detail/runnable.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>

namespace weft::detail {

class blocking_admission {
 public:
  // Both limits are at least 1: runtime::builder refuses a zero capacity with a usage_error.
  blocking_admission(std::size_t max_threads, std::size_t max_queued)
      : max_threads_(max_threads), max_queued_(max_queued) {
    WEFT_ASSERT(max_threads_ > 0);
    WEFT_ASSERT(max_queued_ > 0);
  }
  blocking_admission(const blocking_admission&) = delete;
  blocking_admission& operator=(const blocking_admission&) = delete;

  std::size_t max_threads() const noexcept { return max_threads_; }
  std::size_t max_queued() const noexcept { return max_queued_; }

  // Any thread. On refusal the job is destroyed unrun (discard()). When the job needs a new
  // thread, `start(threads)` is called under the lock: it appends the started thread (whose body
  // calls serve()) to `threads`, or throws std::system_error if none could be started.
  template <class Start>
  submit_result submit(runnable* job, Start&& start) {
    bool start_thread = false;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      const verdict v = guarded_.with_mut([&](guarded& g) {
        if (g.closed) return verdict::closed;
        const bool taker_available = g.takers() > g.queue.size();
        const bool can_grow = g.threads.size() < max_threads_;
        if (WEFT_FAULT_POINT(blocking_saturated) || (!taker_available && !can_grow && g.waiting() >= max_queued_)) {
          return verdict::full;
        }
        g.queue.push_back(job);
        if (!taker_available && can_grow) {
          try {
            start(g.threads);
            ++g.starting;
            start_thread = true;
          } catch (const std::system_error&) {
            // No new thread: the job waits for an existing one, unless there is none or it would
            // be one waiting job more than max_queued.
            if (g.threads.empty() || g.waiting() > max_queued_) {
              g.queue.pop_back();
              return verdict::full;
            }
          }
        }
        return verdict::accepted;
      });
      if (v != verdict::accepted) {
        job->discard();
        return unexpected(v == verdict::closed ? queue_error::closed : queue_error::full);
      }
    }
    if (!start_thread) work_ready_.notify_one();
    return {};
  }

  // A pool thread's body (after its start was counted by submit): runs queued jobs, outside the
  // lock, until the pool is closed and the queue empty.
  void serve() {
    sync::unique_lock<sync::mutex> hold(lock_);
    guarded_.with_mut([](guarded& g) {
      WEFT_ASSERT(g.starting > 0);
      --g.starting;  // from here on this thread is counted as idle or running
    });
    for (;;) {
      runnable* job = nullptr;
      for (;;) {
        const bool wait = guarded_.with_mut([&](guarded& g) {
          if (!g.queue.empty()) {
            job = g.queue.front();
            g.queue.pop_front();
            ++g.running;
            return false;
          }
          if (g.closed) return false;  // closed and nothing left
          ++g.idle;
          return true;
        });
        if (!wait) break;
        work_ready_.wait(hold);
        guarded_.with_mut([](guarded& g) { --g.idle; });
      }
      if (job == nullptr) break;
      hold.unlock();
      (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop as a job starts
      job->run();  // blocking jobs never throw (their exceptions are their results)
      hold.lock();
      guarded_.with_mut([](guarded& g) { --g.running; });
    }
  }

  // Closes admission and discards queued jobs; returns how many were discarded. Does not wait.
  std::uint64_t close() {
    std::deque<runnable*> dropped;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      const bool already = guarded_.with_mut([&](guarded& g) {
        if (g.closed) return true;
        g.closed = true;
        dropped.swap(g.queue);
        return false;
      });
      if (already) return 0;
    }
    work_ready_.notify_all();
    for (runnable* job : dropped) job->discard();
    return dropped.size();
  }

  // Hands the started threads to the caller (to join them).
  std::vector<platform::thread> take_threads() {
    std::vector<platform::thread> threads;
    sync::lock_guard<sync::mutex> hold(lock_);
    guarded_.with_mut([&](guarded& g) { threads.swap(g.threads); });
    return threads;
  }

  // Observation for tests, stats and the model (approximate under concurrency).
  std::size_t threads_started() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with([](const guarded& g) { return g.threads.size(); });
  }
  std::size_t queued() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with([](const guarded& g) { return g.queue.size(); });
  }
  std::size_t running() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with([](const guarded& g) { return g.running; });
  }
  // Queued jobs beyond the idle and starting threads: the ones bounded by max_queued.
  std::size_t waiting() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with([](const guarded& g) { return g.waiting(); });
  }

 private:
  enum class verdict { accepted, full, closed };

  struct guarded {
    std::deque<runnable*> queue;             // bounded by max_queued_ waiting jobs
    std::vector<platform::thread> threads;   // bounded by max_threads_
    std::size_t idle = 0;                    // threads waiting for work
    std::size_t starting = 0;                // threads started but not yet in their loop
    std::size_t running = 0;                 // jobs being run
    bool closed = false;

    // Threads that will take a queued job without a new thread: idle ones and ones still starting.
    std::size_t takers() const noexcept { return idle + starting; }
    // Queued jobs beyond the takers: the ones that really wait, and only they count against
    // max_queued.
    std::size_t waiting() const noexcept { return queue.size() > takers() ? queue.size() - takers() : 0; }
  };

  const std::size_t max_threads_;
  const std::size_t max_queued_;
  sync::mutex lock_;
  sync::condvar work_ready_;
  sync::cell<guarded> guarded_;
};

}  // namespace weft::detail
