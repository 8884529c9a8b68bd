// weft/detail/task_counter.hpp — counts a runtime's unfinished tasks, so a graceful stop can wait
// until every accepted task has finished.
//
// started() is called when a task cell is created (before it can finish), finished() when it
// completes by any path (value, panic, cancellation, abandonment). wait_idle() returns once the
// count is zero. A submission holds an admission_hold (one more count) from before it checks
// admission until its cell exists, so a drain that closed admission and then saw zero cannot miss a
// submission that passed the check: the hold's increment and the admission load, like the drain's
// close and its first count load, are seq_cst (a store-load pair on each side: acquire and release
// alone would let both sides read the old value). The count is atomic so the hot paths take no
// lock; the lock is taken only by a finisher that brought the count to zero, to wake waiters
// without a lost wake-up: a waiter checks the count under the lock, and the finisher takes that
// lock before notifying. A hold handed over to the task cell it admitted
// (task_header::mark_spawned) becomes that task's count, so an admitted spawn costs one atomic
// increment instead of an increment for the hold, another for the task and a decrement when the
// hold ends; the count is held without a gap either way.
//
// Finished tasks are reported in batches (finished_many) by the threads that poll them. A
// stealing pool's worker counts the tasks that finish on it (per priority level) and subtracts a
// level's at once after `finished_batch` of them, and all of them whenever it finds no work
// (before it spins or parks) and as it exits. A runtime's worker loop (any event loop) counts
// those of a turn and subtracts them at the turn's end (sooner after `finished_batch`) and at its
// shutdown. The count is then briefly higher than the number of unfinished tasks, never lower, so
// a drain that sees zero still finds every task finished; it sees zero at the latest when the
// last thread with finished tasks ends its turn or runs out of work. A spawn on a thread holding
// such a finish takes it over as its admission hold instead of adding one: the count stays the
// same, and the shared counter's cache line stays where it is. Every count starts as a seq_cst
// increment (a hold's, or started()'s), which happens before the finish and so before the
// credited spawn's admission load: a drain that closed admission after that load still sees the
// count, as it would see a hold of the spawn's own.
#pragma once

#include <cstddef>
#include <optional>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

// Finished tasks a pool worker reports in one subtraction at most (task_counter.hpp's head).
inline constexpr std::size_t finished_batch = 64;

class task_counter {
 public:
  void started() noexcept {
    // seq_cst: a finished task's count may become a later spawn's admission hold (the head of
    // this file), and the drain's store-load pair needs every count added by a seq_cst operation.
    live_.fetch_add(1, std::memory_order_seq_cst);
  }
  void finished() { finished_many(1); }
  // `n` tasks finished (a pool worker's batch).
  void finished_many(std::size_t n) {
    // acq_rel: the release orders the tasks' completion before a waiter's acquire load that
    // sees zero; the acquire keeps the notification after the decrement.
    const std::size_t prior = live_.fetch_sub(n, std::memory_order_acq_rel);
    WEFT_ASSERT(prior >= n);
    if (prior == n) {
      { sync::lock_guard<sync::mutex> hold(lock_); }
      idle_.notify_all();
    }
  }
  // One count held by a submission from before its admission check until its task cell exists,
  // which then either counts itself or takes this count over (hand_over): see the head of this
  // file.
  class admission_hold {
   public:
    explicit admission_hold(task_counter& counter) noexcept : admission_hold(counter, false) {}
    // `credited`: the caller turns a count it already holds in the total into this hold, so
    // nothing is added (a pool worker's finished task not yet subtracted; the head of this file).
    admission_hold(task_counter& counter, bool credited) noexcept : counter_(counter) {
      // seq_cst: ordered before the submitter's seq_cst admission load, against the drain's
      // seq_cst close and count load (the head of this file). A credited hold's count came from
      // such an increment that happens before this submission, so the same pair holds.
      if (!credited) counter_.live_.fetch_add(1, std::memory_order_seq_cst);
    }
    ~admission_hold() {
      if (!handed_over_) counter_.finished();
    }
    admission_hold(const admission_hold&) = delete;
    admission_hold& operator=(const admission_hold&) = delete;

    task_counter& counter() const noexcept { return counter_; }
    // The task cell this submission created is counted by this hold from now on: the cell's
    // completion (finished()) releases it, and the hold's end no longer does.
    void hand_over() noexcept {
      WEFT_ASSERT(!handed_over_);
      handed_over_ = true;
    }

   private:
    task_counter& counter_;
    bool handed_over_ = false;
  };

  std::size_t live() const noexcept {
    // seq_cst (an acquire, pairing with the release in finished(), and more): a drain's first
    // load after closing admission must see any admission_hold whose submitter could still see
    // admission open (the head of this file).
    return live_.load(std::memory_order_seq_cst);
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
