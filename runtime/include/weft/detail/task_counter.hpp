// weft/detail/task_counter.hpp — counts a runtime's unfinished tasks, so a graceful stop can wait
// until every accepted task has finished.
//
// started() is called when a task cell is created (before it can finish), finished() when it
// completes by any path (value, panic, cancellation, abandonment). wait_idle() returns once the
// count is zero. The count is atomic so the hot paths take no lock; the lock is taken only by a
// finisher that brought the count to zero, to wake waiters without a lost wake-up: a waiter checks
// the count under the lock, and the finisher takes that lock before notifying.
#pragma once

#include <cstddef>
#include <optional>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class task_counter {
 public:
  void started() noexcept {
    // relaxed: the count carries no data; waiters re-check it under the lock.
    live_.fetch_add(1, std::memory_order_relaxed);
  }
  void finished() {
    // acq_rel: the release orders the task's completion before a waiter's acquire load that
    // sees zero; the acquire keeps the notification after the decrement.
    const std::size_t prior = live_.fetch_sub(1, std::memory_order_acq_rel);
    WEFT_ASSERT(prior > 0);
    if (prior == 1) {
      { sync::lock_guard<sync::mutex> hold(lock_); }
      idle_.notify_all();
    }
  }
  std::size_t live() const noexcept {
    return live_.load(std::memory_order_acquire);  // pairs with the release in finished()
  }
  // Waits until no task is live, or until `deadline`. Returns true when idle.
  bool wait_idle(std::optional<instant> deadline) {
    sync::unique_lock<sync::mutex> hold(lock_);
    while (live() != 0) {
      if (deadline) {
        if (!idle_.wait_until(hold, *deadline) && live() != 0 && platform::clock::now() >= *deadline) {
          return false;
        }
      } else {
        idle_.wait(hold);
      }
    }
    return true;
  }

 private:
  sync::atomic<std::size_t> live_{0};
  sync::mutex lock_;
  sync::condvar idle_;
};

}  // namespace weft::detail
