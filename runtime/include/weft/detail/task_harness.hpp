// weft/detail/task_harness.hpp — the steps that move a task cell through its state word: wake,
// wake by value, abort, poll and completion, and who holds which reference after each.
//
// task_header (task_cell.cpp) runs every task through task_harness<task_header>; the Relacy model
// of the task state (models/src/task_state_model.cpp) drives task_harness<model_cell> over a cell
// of its own, so the model checks this code, not a copy of it. A cell supplies what is not the
// state machine (task_header declares the harness a friend):
//
//   state, join_waker_slot   the state word (task_state.hpp) and the join-waker slot
//                            (join_handoff.hpp)
//   polled_here()            any thread: true inside this task's own poll, on its owner thread
//   note_self_wake()         owner thread, inside the poll: the task woke itself (a yield)
//   submit()                 any thread: queue a poll on the owner loop; the queue entry takes a
//                            reference the caller has already accounted for
//   poll_frame()             owner thread: poll the awaited leaf and resume the coroutine if it
//                            is ready; a finished task has its output stored and its frame gone
//   cancel_frame()           owner thread: destroy the frame and store `cancelled`
//   leave_owner_list()       owner thread, completing: unlink from the owned-task list
//   drop_unread_output()     owner thread, completing: destroy an output no handle will read
//   count_finished()         owner thread, once `complete` is published
//   release(n)               any thread: drop n references, one by default, in one operation
//                            (the last one frees the cell)
//
// References (task_state.hpp counts them): a wake that queues a poll adds the queue entry's (by
// value, the waker's own goes with the entry instead); a poll consumes its entry's, handing it to
// the re-queue, dropping it in the idle transition, or releasing it with the owned-task list's
// at completion (one operation for the two).
//
// A poll starts with a look at the state word, not a read-modify-write (task_state::begin_poll:
// `scheduled` covers the poll as well as the queued entry). A yield costs no atomic operation:
// the wake from inside the poll is an owner-thread flag, and the poll's end re-queues the task
// still `scheduled`. Wakes and aborts meanwhile set `notified`, which the next poll's start or
// end consumes.
#pragma once

#include <weft/detail/join_handoff.hpp>
#include <weft/detail/task_state.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>
#include <weft/platform/trace.hpp>

namespace weft::detail {

// Where a completion comes from, which decides the references it releases.
enum class completion {
  poll,      // the task's poll finished or cancelled it: the list's and the queue entry's
  teardown,  // an idle task (or one with an entry the loop only discards) at loop shutdown: the
             // list's
  abandon,   // a cell never adopted by its owner: the list's and the entry it never had polled
};

// What the coroutine did in one poll_frame().
enum class poll_step {
  finished,  // done (or its factory failed): the output is stored, the frame destroyed
  waiting,   // suspended on a leaf until a wake
  yielded,   // suspended on a leaf after waking itself during the poll: poll it again
};

template <class Cell>
struct task_harness {
  // Any thread: ask for a poll (a wake through a waker that keeps its reference).
  static void schedule_poll(Cell& cell) noexcept {
    (void)wake_once(cell, /*waker_reference_given=*/false);
    if (WEFT_FAULT_POINT(duplicate_wake)) schedule_poll(cell);  // the same wake arrives twice
  }

  // Any thread: schedule_poll() by an owning waker that is used up by it (waker::wake() &&): the
  // waker's reference goes with the wake (task_state::transition_to_scheduled_by_value).
  static void schedule_poll_by_value(Cell& cell) noexcept {
    // The duplicate comes first here: after the wake below this waker may hold no reference.
    if (WEFT_FAULT_POINT(duplicate_wake)) schedule_poll(cell);  // the same wake arrives twice
    if (!wake_once(cell, /*waker_reference_given=*/true)) {
      cell.release();  // no queue entry took the waker's reference: drop it (maybe the last)
    }
  }

  // Any thread: ask for cancellation; the poll it queues completes the task as cancelled.
  static void request_cancel(Cell& cell) noexcept {
    WEFT_TRACE_TASK(cancel_requested, &cell);
    if (cell.state.transition_to_cancel_requested() == task_state::wake_action::submit) {
      cell.submit();
    }
  }

  // Owner thread: one poll, consuming the queue entry's reference.
  static void run(Cell& cell) noexcept {
    WEFT_TRACE_TASK(poll_begin, &cell);
    if (cell.state.begin_poll() == task_state::poll_action::cancel) {
      cell.cancel_frame();
      complete(cell, completion::poll);  // traced poll_end: the cell may be gone
      return;
    }
    const poll_result result = poll(cell);
    if (result == poll_result::completed) return;  // as above
    WEFT_TRACE_TASK(poll_end, &cell);
    if (WEFT_FAULT_POINT(spurious_wake)) schedule_poll(cell);  // nothing asked for it
    // requeue: the queue entry's reference goes with the new entry; idle: transition_to_idle
    // dropped it.
    if (result == poll_result::requeue) cell.submit();
  }

  // Owner thread, with the frame gone and the output stored: publish `complete`, then release the
  // owned-task list's reference and, from a poll or for an abandoned cell, the queue entry's, in
  // one operation. From a poll it also traces the poll's end, before that release.
  static void complete(Cell& cell, completion how) noexcept {
    const bool from_idle = how != completion::poll;
    WEFT_TRACE_TASK(completed, &cell);
    // Unlink from the owner's task list first (the list's reference is released last, below).
    cell.leave_owner_list();
    // Publish `complete`; destroy the output if the handle is gone, else wake the joiner
    // (join_handoff.hpp).
    join_handoff::complete(cell.state, cell.join_waker_slot, from_idle, [&cell]() noexcept {
      cell.drop_unread_output();
    });
    // After `complete` is published: a drain that sees the count reach zero must find every
    // handle finished. (The cell is still alive: the list's reference is released below.)
    cell.count_finished();
    if (how == completion::poll) WEFT_TRACE_TASK(poll_end, &cell);
    cell.release(how == completion::teardown ? 1 : 2);  // maybe the last
  }

 private:
  enum class poll_result {
    completed,  // the task finished (or its factory failed)
    idle,       // waiting on a leaf until a wake
    requeue,    // woken (or yielded) during the poll: queue it again, still `scheduled`, with
                // the poll's queue reference
  };

  static poll_result poll(Cell& cell) noexcept {
    const poll_step step = cell.poll_frame();
    if (step == poll_step::finished) {
      complete(cell, completion::poll);
      return poll_result::completed;
    }
    if (step == poll_step::yielded) return poll_result::requeue;
    return cell.state.transition_to_idle() == task_state::idle_action::reschedule ? poll_result::requeue
                                                                                  : poll_result::idle;
  }

  // One wake (schedule_poll / schedule_poll_by_value without their duplicate-wake fault point).
  // `waker_reference_given`: the caller's waker reference goes with a queued poll. Returns true
  // when a poll was queued; the cell must not be touched afterwards unless the caller still holds
  // a reference of its own.
  static bool wake_once(Cell& cell, bool waker_reference_given) noexcept {
    if (WEFT_FAULT_POINT(delayed_wake)) platform::yield_thread();  // the wake arrives late
    if (cell.polled_here()) {
      // Woken from inside its own poll, on its own thread (a yield): the poll's end re-queues it
      // (poll_result::requeue); no atomic transition needed here.
      cell.note_self_wake();
      WEFT_TRACE_TASK(woken, &cell);
      return false;
    }
    const task_state::wake_action action = waker_reference_given ? cell.state.transition_to_scheduled_by_value()
                                                                 : cell.state.transition_to_scheduled();
    if (action == task_state::wake_action::submit) {
      WEFT_TRACE_TASK(woken, &cell);  // before the hand-off: the owner may poll (and free) it at once
      cell.submit();  // the entry's reference: added by the transition, or the waker's
      return true;
    }
    WEFT_TRACE_TASK(wake_coalesced, &cell);
    return false;
  }
};

}  // namespace weft::detail
