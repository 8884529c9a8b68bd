// loop_shared.cpp — cross-thread submission into a loop.
#include <weft/detail/delayed_notification.hpp>
#include <weft/detail/loop_shared.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/event_loop.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>

namespace weft::detail {

loop_shared::loop_shared(std::size_t inbox_capacity, std::shared_ptr<telemetry_sink> sink,
                         std::uint64_t owner, const platform::driver_options& driver_options)
    : task_owner(/*stash_references=*/false),
      owner_thread(owner),
      inbox(inbox_capacity),
      driver(driver_options),
      sink_(sink ? std::move(sink) : noop_telemetry()) {
  set_poll_domain(this);
}

remote_inbox::push_result loop_shared::push_user(runnable* item) {
  bool wake_owner = false;
  const remote_inbox::push_result result =
      WEFT_FAULT_POINT(inbox_full) ? remote_inbox::push_result::full : inbox.push_user(item, &wake_owner);
  if (result == remote_inbox::push_result::accepted) {
    if (wake_owner) driver.notify();  // else the push of an item queued ahead notifies
  } else if (result == remote_inbox::push_result::full) {
    // relaxed: a once-only flag; the report carries no data that needs ordering.
    if (!overflow_reported_.exchange(true, std::memory_order_relaxed)) {
      sink_->record(telemetry_event{telemetry_kind::inbox_overflow, "remote inbox full: a submission was refused",
                                    inbox.capacity(), {}});
    }
  }
  return result;
}

submit_result loop_shared::submit_user(runnable* item) {
  switch (push_user(item)) {
    case remote_inbox::push_result::accepted:
      return {};
    case remote_inbox::push_result::full:
      item->discard();
      return unexpected(queue_error::full);
    case remote_inbox::push_result::closed:
      item->discard();
      return unexpected(queue_error::closed);
  }
  WEFT_ASSERT(false);
  return unexpected(queue_error::closed);
}

void loop_shared::submit_internal(runnable* item) noexcept {
  // The item may carry the last reference to this loop (a task woken by value): once pushed, the
  // owner can run and free it and be destroyed before the notify below. So the caller holds a
  // reference of its own across the push and the notify, taken while the item still keeps one.
  ref_inc();
  bool wake_owner = false;
  if (inbox.push_internal(item, &wake_owner)) {
    maybe_delay_notification();
    if (wake_owner) driver.notify();  // else the push of a wake queued ahead notifies
  } else {
    item->discard();  // the loop is gone: nothing left to wake or notify
  }
  release();  // maybe the last: this thread then frees the loop's shared part
}

void loop_shared::schedule_task(task_header* task) noexcept {
  // `loop` may only be read on the owner thread; the thread check comes first.
  if (on_owner_thread() && loop != nullptr) {
    loop->push_microtask(task);
  } else {
    submit_internal(task);
  }
}

void loop_shared::task_finished(task_header* task) noexcept {
  WEFT_ASSERT(on_owner_thread() && loop != nullptr);
  loop->task_finished(task);
}

}  // namespace weft::detail
