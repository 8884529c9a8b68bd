// weft/detail/task_state.hpp — the atomic state word of a task cell.
//
// One 64-bit word holds the lifecycle bits and the reference count, so that every transition is
// a single atomic read-modify-write and no transition can observe a torn combination.
//
//   bit          meaning                                         set by            cleared by
//   scheduled    a poll is queued or in progress; the queue      wake / abort      poll end (idle),
//                entry (then the poll) owns a reference                            completion
//   notified     woken while scheduled: poll again               wake / abort      poll start,
//                                                                                  poll end (re-queue)
//   complete     terminal; the coroutine frame is gone           completion        never
//   cancelled    cancellation requested                           abort / shutdown  never
//   join_interest a join handle exists                            spawn             handle drop
//   join_waker   the join-waker slot holds the joiner's waker    joiner            joiner (not complete)
//   refs (high)  owners: owned-task list, queue entry, join handle, each waker clone
//
// `scheduled` covers the queued entry and the poll that consumes it alike, so a poll starts
// without a read-modify-write: it only looks at the word, and clears `notified` if a wake set it
// since the entry was queued (the poll about to run is the one that wake asked for).
//
// Invariants (asserted where they are relied on):
//   * at most one queue entry or poll exists per task (it is what `scheduled` stands for; a
//     wake on a scheduled task sets `notified` instead of queueing);
//   * complete is only set by the owner thread, from a poll (or from idle at loop shutdown);
//   * once complete is set, scheduled is never set again, so no poll follows completion;
//   * the cell is deallocated exactly once, by whoever drops the last reference.
//
// Memory orders: a wake's transition releases what the waker wrote; the poll it causes acquires
// it through the queue that hands the entry over (a lock, or a release/acquire pair), or, when
// the wake only set `notified`, through the read-modify-write that consumes `notified` (the poll
// start's or the poll end's). Completion (release, with the output written before it)
// happens-before a joiner's acquire read of `complete`. Reference increments are relaxed (the
// incrementer already holds a reference); decrements are acq_rel so that the last owner sees
// every other owner's writes before freeing.
#pragma once

#include <cstdint>

#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class task_state {
 public:
  using word = std::uint64_t;
  static constexpr word scheduled = word{1} << 0;
  static constexpr word notified = word{1} << 1;
  static constexpr word complete = word{1} << 2;
  static constexpr word cancelled = word{1} << 3;
  static constexpr word join_interest = word{1} << 4;
  static constexpr word join_waker = word{1} << 5;
  static constexpr int ref_shift = 8;
  static constexpr word ref_one = word{1} << ref_shift;
  static constexpr word lifecycle_mask = ref_one - 1;

  // A new spawned task: queued for its first poll, with a join handle. References: the owned-task
  // list, the queue entry, the join handle.
  static constexpr word initial_spawned = scheduled | join_interest | 3 * ref_one;

  explicit task_state(word initial) noexcept : word_(initial) {}

  static std::uint64_t refs_of(word w) noexcept { return w >> ref_shift; }

  word load(std::memory_order order) const noexcept { return word_.load(order); }

  // --- wake ---------------------------------------------------------------------------------
  enum class wake_action {
    none,    // already scheduled, notified, or complete: the wake coalesced / was late
    submit,  // the caller must queue a poll; a reference for that queue entry has been added
  };
  wake_action transition_to_scheduled() noexcept { return schedule(ref_one); }
  // Wake by value (waker::wake() &&): the waker gives up its reference with the wake. When a poll
  // must be queued the entry takes that reference, so none is added (and the waker's drop, a
  // second atomic operation on the word, is saved); on `none` the caller still holds it and must
  // drop it.
  wake_action transition_to_scheduled_by_value() noexcept { return schedule(0); }

 private:
  // The wake transition; `entry_reference` is what a queued poll's entry adds to the count.
  wake_action schedule(word entry_reference) noexcept {
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      word next = cur;
      wake_action action = wake_action::none;
      if (cur & complete) return wake_action::none;  // late: no poll will follow, none is needed
      if (cur & notified) {
        // Coalesce, but still through the CAS below (next == cur): a plain load may return a
        // stale `notified` that a poll already consumed (store-buffering: our caller's writes
        // and that poll's read of them may pass each other), and the wake would be lost. The
        // read-modify-write reads the latest word, so it is either ordered before the
        // read-modify-write that consumes `notified` (which then acquires our writes) or it sees
        // the word without `notified`. (The Relacy model task_state/wake_vs_poll checks this.)
      } else if (cur & scheduled) {
        next |= notified;  // a poll is queued or running: it must look (again) after this wake
      } else {
        next |= scheduled;
        next += entry_reference;
        action = wake_action::submit;
      }
      // acq_rel: release publishes the waker's writes to the poll that this wake causes (paired
      // with the queue hand-off of the entry we submit, or with the acquire of begin_poll or
      // transition_to_idle when we set or re-wrote `notified`); acquire orders us after the
      // poll that last cleared `scheduled`.
      if (word_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return action;
      }
    }
  }

 public:
  // --- abort --------------------------------------------------------------------------------
  // Sets `cancelled`; then behaves like a wake so the owner polls the task and sees the request.
  wake_action transition_to_cancel_requested() noexcept {
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      if (cur & (complete | cancelled)) return wake_action::none;
      word next = cur | cancelled;
      wake_action action = wake_action::none;
      if (cur & scheduled) {
        next |= notified;  // a queued poll may have looked already, a running one has
      } else {
        next |= scheduled;
        next += ref_one;
        action = wake_action::submit;
      }
      // acq_rel: as in schedule().
      if (word_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return action;
      }
    }
  }

  // --- poll ---------------------------------------------------------------------------------
  enum class poll_action {
    poll,    // resume the coroutine if its awaited leaf is ready
    cancel,  // cancellation was requested: destroy the frame and complete as cancelled
  };
  // Start of a poll, on the owner thread, for the queue entry it consumes. `scheduled` stays
  // set for the poll's duration, so a poll costs no read-modify-write unless a wake or abort
  // set `notified` since the entry was queued: this poll is the one they asked for, so it
  // clears the bit (and acquires what they wrote) rather than leave a second poll queued.
  poll_action begin_poll() noexcept {
    // relaxed: the wake that queued the entry is ordered before us by the queue that handed
    // the entry over; `notified` is acquired by the CAS below, or by transition_to_idle.
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      WEFT_ASSERT(cur & scheduled);
      WEFT_ASSERT(!(cur & complete));
      if (!(cur & notified)) break;
      // acquire: pairs with the release of the wake or abort that set `notified`.
      if (word_.compare_exchange_weak(cur, cur & ~notified, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
        break;
      }
    }
    return (cur & cancelled) ? poll_action::cancel : poll_action::poll;
  }

  enum class idle_action {
    idle,        // nothing more to do until a wake. The poll's queue reference was dropped by
                 // the transition itself: the caller must not release it again
    reschedule,  // woken (or aborted) during the poll: queue it again. No reference is added:
                 // the poll's own queue reference goes with the new queue entry
  };
  // End of a poll that left the task waiting (a poll that yielded re-queues the task without a
  // transition: `scheduled` stays, task_harness.hpp). Going idle drops the poll's queue reference
  // in the same read-modify-write (one atomic operation per suspension instead of two). It can
  // never be the last reference: the owned-task list holds one until completion, and only the
  // owner thread — this one — completes a task.
  idle_action transition_to_idle() noexcept {
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      WEFT_ASSERT(cur & scheduled);
      word next = cur;
      idle_action action = idle_action::idle;
      if (cur & notified) {
        next &= ~notified;  // `scheduled` stays: it goes with the new queue entry
        action = idle_action::reschedule;
      } else {
        WEFT_ASSERT(refs_of(cur) >= 2);  // the queue entry's and the owned-task list's
        next &= ~scheduled;
        next -= ref_one;  // the queue entry's reference, gone with the entry
      }
      // acq_rel: release publishes this poll's writes to a later poll on behalf of a waker that
      // saw `scheduled` clear, and to whoever drops the last reference (as ref_dec's release);
      // acquire pairs with the release of the wake that set `notified`: the poll we re-queue
      // starts with a relaxed look and must see what that waker wrote.
      if (word_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return action;
      }
    }
  }

  // Completes a task from its poll (or, with from_idle, one torn down at shutdown, idle or with
  // an entry queued that will only be discarded). The output must already be stored. Returns the
  // word before the transition, from which the caller learns whether a join handle still exists
  // and whether a join waker is registered.
  word transition_to_complete(bool from_idle = false) noexcept {
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      WEFT_ASSERT(!(cur & complete));
      WEFT_ASSERT(from_idle || (cur & scheduled));
      const word next = (cur & ~(scheduled | notified)) | complete;
      // acq_rel: release publishes the stored output to the joiner (paired with the acquire
      // in poll_join / drop_join_interest); acquire makes a joiner's waker registration
      // (released by set_join_waker) visible before we read the slot.
      if (word_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return cur;
      }
    }
  }

  // --- join ---------------------------------------------------------------------------------
  // Joiner, with the slot written: publishes the waker. Fails (returns false) when the task
  // completed first; the joiner then still owns the slot's content and reads the output.
  bool set_join_waker() noexcept {
    // acquire: when this load already shows `complete` we return without a CAS and the caller
    // reads the output, so the load itself must pair with transition_to_complete's release
    // (the Relacy model join_handoff/join_vs_complete shows a relaxed load here racing the output).
    word cur = word_.load(std::memory_order_acquire);
    for (;;) {
      WEFT_ASSERT(cur & join_interest);
      WEFT_ASSERT(!(cur & join_waker));
      if (cur & complete) return false;
      // release: publishes the slot write to the completer (paired with the acquire in
      // transition_to_complete). acquire on failure: see the output if it completed.
      if (word_.compare_exchange_weak(cur, cur | join_waker, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        return true;
      }
    }
  }

  // Joiner: takes the slot back to replace its waker. Fails when the task completed first (the
  // completer then owns the slot).
  bool unset_join_waker() noexcept {
    // acquire: as in set_join_waker, an early `complete` return leads to the output read.
    word cur = word_.load(std::memory_order_acquire);
    for (;;) {
      WEFT_ASSERT(cur & join_interest);
      WEFT_ASSERT(cur & join_waker);
      if (cur & complete) return false;
      // acquire: on failure, see the output; on success nothing is published.
      if (word_.compare_exchange_weak(cur, cur & ~join_waker, std::memory_order_acquire,
                                      std::memory_order_acquire)) {
        return true;
      }
    }
  }

  // Join handle dropped. Returns the word before: if `complete` was set, the handle owns the
  // output and must destroy it; otherwise the completer will (it sees no join_interest). When
  // not complete, join_waker is cleared too and the handle must clear the slot.
  word drop_join_interest() noexcept {
    word cur = word_.load(std::memory_order_relaxed);
    for (;;) {
      WEFT_ASSERT(cur & join_interest);
      word next = cur & ~join_interest;
      if (!(cur & complete)) next &= ~join_waker;
      // acq_rel: acquire to see the output when complete; release so the completer, seeing
      // join_interest gone, orders its output destruction after our last read.
      if (word_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return cur;
      }
    }
  }

  // Joiner that took the output (the task is complete): drops its interest and the handle's
  // reference in one read-modify-write, where drop_join_interest and ref_dec would take two.
  // join_interest is set, so subtracting it clears that bit alone. Returns true when this was the
  // last reference: the caller deallocates.
  bool drop_join_interest_and_reference() noexcept {
    // acq_rel: as ref_dec (the last owner sees every other owner's writes) and as
    // drop_join_interest (the output was read before the completer may free the cell).
    const word prior = word_.fetch_sub(join_interest + ref_one, std::memory_order_acq_rel);
    WEFT_ASSERT(prior & join_interest);
    WEFT_ASSERT(prior & complete);
    WEFT_ASSERT(refs_of(prior) > 0);
    return refs_of(prior) == 1;
  }

  // --- references ---------------------------------------------------------------------------
  void ref_inc() noexcept {
    // relaxed: the caller already holds a reference, so the cell cannot be freed concurrently.
    const word prior = word_.fetch_add(ref_one, std::memory_order_relaxed);
    WEFT_ASSERT(refs_of(prior) > 0);
  }
  // Drops `count` references the caller holds, in one operation. Returns true when they were
  // the last: the caller deallocates.
  bool ref_dec(std::uint64_t count = 1) noexcept {
    // acq_rel: release our writes to the last owner; acquire everyone's before deallocation.
    const word prior = word_.fetch_sub(count * ref_one, std::memory_order_acq_rel);
    WEFT_ASSERT(refs_of(prior) >= count);
    return refs_of(prior) == count;
  }

 private:
  sync::atomic<word> word_;
};

}  // namespace weft::detail
