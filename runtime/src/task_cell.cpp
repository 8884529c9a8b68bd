// task_cell.cpp — the poll, completion and wake paths of a task cell (see task_header.hpp and
// task_state.hpp for the states and who may touch what; task_waker.cpp has its wakers).
#include <utility>

#include <weft/detail/join_handoff.hpp>
#include <weft/detail/loop_shared.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/event_loop.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>
#include <weft/platform/trace.hpp>

namespace weft::detail {

namespace {
struct current_task_tag;
using current_task_slot = platform::thread_slot<task_header, current_task_tag>;
}  // namespace

task_header* current_task() noexcept { return current_task_slot::get(); }

task_header::task_header(loop_shared* owner, std::uint32_t id, std::coroutine_handle<> root) noexcept
    : runnable(runnable_kind::task_poll),
      id_(id),
      owner_(owner),
      root_(root) {
  ::new (static_cast<void*>(shared_)) wait_point{};  // until the output is stored (task_header.hpp)
  owner_->ref_inc();
}

void task_header::mark_spawned() noexcept {
  if (owner_->counter) owner_->counter->started();
  WEFT_TRACE_TASK(spawned, this);
}

task_header::~task_header() { owner_->release(); }

bool task_header::wake_once(bool waker_reference_given) noexcept {
  if (WEFT_FAULT_POINT(delayed_wake)) platform::yield_thread();  // the wake arrives late
  if (current_task_slot::get() == this) {
    // Woken from inside its own poll, on its own thread (a yield): the poll's end re-queues it
    // (task_state::transition_to_idle(self_woken)); no atomic transition needed here.
    self_woken_ = true;
    WEFT_TRACE_TASK(woken, this);
    return false;
  }
  const task_state::wake_action action =
      waker_reference_given ? state.transition_to_scheduled_by_value() : state.transition_to_scheduled();
  if (action == task_state::wake_action::submit) {
    WEFT_TRACE_TASK(woken, this);  // before the hand-off: the owner may poll (and free) it at once
    owner_->schedule_task(this);  // the entry's reference: added by the transition, or the waker's
    return true;
  }
  WEFT_TRACE_TASK(wake_coalesced, this);
  return false;
}

void task_header::schedule_poll() noexcept {
  (void)wake_once(/*waker_reference_given=*/false);
  if (WEFT_FAULT_POINT(duplicate_wake)) schedule_poll();  // the same wake arrives twice
}

void task_header::schedule_poll_by_value() noexcept {
  // The duplicate comes first here: after the wake below this waker may hold no reference.
  if (WEFT_FAULT_POINT(duplicate_wake)) schedule_poll();  // the same wake arrives twice
  if (!wake_once(/*waker_reference_given=*/true)) {
    release();  // no queue entry took the waker's reference: drop it (maybe the last)
  }
}

void task_header::request_cancel() noexcept {
  WEFT_TRACE_TASK(cancel_requested, this);
  if (state.transition_to_cancel_requested() == task_state::wake_action::submit) {
    owner_->schedule_task(this);
  }
}

void task_header::run() {
  WEFT_ASSERT(owner_->on_owner_thread());  // tasks never migrate
  WEFT_TRACE_TASK(poll_begin, this);
  poll_result result = poll_result::completed;
  switch (state.transition_to_running()) {
    case task_state::poll_action::poll:
      result = poll_once();
      break;
    case task_state::poll_action::cancel:
      destroy_root();
      store_error(join_error(join_error::cancelled));
      complete(false);
      break;
  }
  WEFT_TRACE_TASK(poll_end, this);
  if (result != poll_result::completed && WEFT_FAULT_POINT(spurious_wake)) schedule_poll();  // nothing asked for it
  switch (result) {
    case poll_result::requeue:
      owner_->schedule_task(this);  // the queue entry's reference goes with the new entry
      return;
    case poll_result::idle:
      return;  // transition_to_idle dropped the queue entry's reference
    case poll_result::completed:
      release();  // the queue entry's reference
      return;
  }
}

task_header::poll_result task_header::poll_once() noexcept {
  (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop between task steps
  task_header* const outer = current_task_slot::get();
  current_task_slot::set(this);
  bool resume = true;
  wait_point& waiting = wait();
  if (waiting.leaf.poll != nullptr) {
    // The leaf decides; a leaf that throws reports ready and rethrows at its co_await.
    resume = waiting.leaf.poll(waiting.leaf.leaf, borrowed_waker());
  } else if (!root_) {
    // First poll of a factory cell: the factory runs here, on the owner thread, inside the poll.
    if (!start_root()) {  // it threw or made no task: the error is stored as the output
      current_task_slot::set(outer);
      self_woken_ = false;
      destroy_root();
      complete(false);
      return poll_result::completed;
    }
  }
  if (resume) {
    const std::coroutine_handle<> next = waiting.resume_at ? waiting.resume_at : root_;
    waiting = wait_point{};
    next.resume();  // runs until the task suspends on a leaf or finishes
  }
  current_task_slot::set(outer);
  const bool self_woken = std::exchange(self_woken_, false);

  if (root_.done()) {
    store_root_result();
    destroy_root();
    complete(false);
    return poll_result::completed;
  }
  // Not finished: it must be waiting on a leaf (the promise accepts no other awaitable).
  WEFT_ASSERT(waiting.leaf.poll != nullptr);
  return state.transition_to_idle(self_woken) == task_state::idle_action::reschedule ? poll_result::requeue
                                                                                     : poll_result::idle;
}

void task_header::cancel_at_shutdown() noexcept {
  WEFT_TRACE_TASK(cancelled_at_shutdown, this);
  destroy_root();
  clear_wait();
  store_error(join_error(join_error::cancelled));
  complete(true);
}

void task_header::abandon(join_error error) noexcept {
  WEFT_TRACE_TASK(abandoned, this);
  WEFT_ASSERT(!adopted_);
  WEFT_ASSERT(kind() == runnable_kind::task_spawn);
  destroy_root();
  store_error(std::move(error));
  complete(true);
  release();  // the queue entry's reference (the cell was never queued for a poll)
}

void task_header::complete(bool from_idle) noexcept {
  WEFT_TRACE_TASK(completed, this);
  // The frame is gone and the output stored. Unlink from the owner's task list first (the list's
  // reference is released last, below).
  if (adopted_) owner_->loop->task_finished(this);
  // Publish `complete`; destroy the output if the handle is gone, else wake the joiner
  // (join_handoff.hpp).
  join_handoff::complete(state, join_waker_slot, from_idle, [this]() noexcept {
    // Nobody will read the outcome: a panic would vanish silently, so report it.
    if (std::exception_ptr panic = stored_panic()) {
      owner_->telemetry().record(telemetry_event{telemetry_kind::task_panic_unobserved,
                                                 "a detached task threw", 1, std::move(panic)});
    }
    destroy_output();
  });
  // After `complete` is published: a drain that sees the count reach zero must find every
  // handle finished. (The cell is still alive: the list's reference is released below.)
  if (owner_->counter) owner_->counter->finished();
  release();  // the owned-task list's reference
}

bool on_owner_thread(const loop_shared* owner) noexcept { return owner->on_owner_thread(); }

event_loop& current_task_loop() {
  if (task_header* t = current_task()) {
    WEFT_ASSERT(t->owner()->loop != nullptr);
    return *t->owner()->loop;
  }
  if (event_loop* loop = event_loop::current()) return *loop;
  throw usage_error("no weft task or event loop is running on this thread");
}

}  // namespace weft::detail
