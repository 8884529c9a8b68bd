// task_cell.cpp — task_header: its poll of the coroutine and the hooks through which
// task_harness.hpp runs its wake, poll and completion paths (see task_header.hpp and
// task_state.hpp for the states and who may touch what; task_waker.cpp has its wakers).
#include <utility>

#include <weft/detail/loop_shared.hpp>
#include <weft/detail/task_harness.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/event_loop.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>
#include <weft/platform/trace.hpp>

namespace weft::detail {

task_header::task_header(task_owner* owner, std::uint32_t id, std::coroutine_handle<> root) noexcept
    : runnable(runnable_kind::task_poll),
      id_(id),
      owner_(owner),
      root_(root) {
  ::new (static_cast<void*>(shared_)) wait_point{};  // until the output is stored (task_header.hpp)
  owner_->ref_inc();
}

void task_header::mark_spawned(task_counter::admission_hold* hold) noexcept {
  if (hold != nullptr) {
    WEFT_ASSERT(owner_->counter == &hold->counter());  // the runtime that admitted it counts it
    hold->hand_over();
  } else if (owner_->counter) {
    owner_->counter->started();
  }
  WEFT_TRACE_TASK(spawned, this);
}

task_header::~task_header() { owner_->release(); }

bool task_header::polled_here() const noexcept { return current_task_slot::get() == this; }

void task_header::submit() noexcept { owner_->schedule_task(this); }

void task_header::schedule_poll() noexcept { task_harness<task_header>::schedule_poll(*this); }

void task_header::schedule_poll_by_value() noexcept { task_harness<task_header>::schedule_poll_by_value(*this); }

void task_header::request_cancel() noexcept { task_harness<task_header>::request_cancel(*this); }

void task_header::run() {
  // A loop's tasks never leave its thread; a pool's stay in it. Not polls_here(): a call through
  // the vtable at every poll cost a visible share of a yield.
  WEFT_ASSERT(owner_->polling_now());
  task_harness<task_header>::run(*this);
}

poll_step task_header::poll_frame() noexcept {
  (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop between task steps
  task_header* const outer = current_task_slot::get();
  current_task_slot::set(this);
  bool resume = true;
  wait_point& waiting = wait();
  if (waiting.leaf.poll == &leaf_ready_at_once) {
    // A yield: ready, nothing to ask.
  } else if (waiting.leaf.poll != nullptr) {
    // The leaf decides; a leaf that throws reports ready and rethrows at its co_await.
    resume = waiting.leaf.poll(waiting.leaf.leaf, borrowed_waker());
  } else if (!root_) {
    // First poll of a factory cell: the factory runs here, on the owner thread, inside the poll.
    if (!start_root()) {  // it threw or made no task: the error is stored as the output
      current_task_slot::set(outer);
      self_woken_ = false;
      destroy_root();
      return poll_step::finished;
    }
  }
  if (resume) {
    const std::coroutine_handle<> next = waiting.resume_at ? waiting.resume_at : root_;
    waiting = wait_point{};
    next.resume();  // runs until the task suspends on a leaf or finishes
  }
  current_task_slot::set(outer);
  const bool self_woken = self_woken_;
  self_woken_ = false;

  if (root_.done()) {
    store_root_result();
    destroy_root();
    return poll_step::finished;
  }
  // Not finished: it must be waiting on a leaf (the promise accepts no other awaitable).
  WEFT_ASSERT(waiting.leaf.poll != nullptr);
  return self_woken ? poll_step::yielded : poll_step::waiting;
}

void task_header::cancel_at_shutdown() noexcept {
  WEFT_TRACE_TASK(cancelled_at_shutdown, this);
  // Idle, or with an entry queued (a wake or a yield) that the loop only discards: from_idle
  // clears a `scheduled` left by that entry with the rest.
  destroy_root();
  clear_wait();
  store_error(join_error(join_error::cancelled));
  complete(completion::teardown);
}

void task_header::abandon(join_error error) noexcept {
  WEFT_TRACE_TASK(abandoned, this);
  WEFT_ASSERT(!adopted_);
  WEFT_ASSERT(kind() == runnable_kind::task_spawn);
  destroy_root();
  store_error(std::move(error));
  complete(completion::abandon);  // with the queue entry's reference (never queued for a poll)
}

void task_header::complete(completion how) noexcept { task_harness<task_header>::complete(*this, how); }

void task_header::leave_owner_list() noexcept {
  if (adopted_) owner_->task_finished(this);
}

void task_header::drop_unread_output() noexcept {
  // Nobody will read the outcome: a panic would vanish silently, so report it.
  if (std::exception_ptr panic = stored_panic()) {
    owner_->telemetry().record(telemetry_event{telemetry_kind::task_panic_unobserved,
                                               "a detached task threw", 1, std::move(panic)});
  }
  destroy_output();
}

void task_header::count_finished() noexcept { owner_->count_finished(); }

bool on_owner_thread(const task_owner* owner) noexcept { return owner->polls_here(); }

event_loop& current_task_loop() {
  if (task_header* t = current_task()) {
    if (event_loop* loop = t->owner()->home_loop()) return *loop;
    throw usage_error("this weft task runs on a stealing_pool, which has no timers or I/O: await them on an "
                      "event loop or runtime worker and hand the result over");
  }
  if (event_loop* loop = event_loop::current()) return *loop;
  throw usage_error("no weft task or event loop is running on this thread");
}

}  // namespace weft::detail
