// weft/detail/loop_shared.hpp — the part of an event loop that other threads may reach.
//
// Reference-counted (task_owner): the loop holds one reference, and so does every task cell,
// thread_handle and worker record that names the loop. It outlives the loop itself (a waker held by another
// thread may still point here after the loop is gone); from then on the inbox is dead and every
// submission is refused. Nothing here keeps the loop *running*.
//
//   field          who touches it
//   inbox          any thread (its own synchronisation)
//   driver         notify(): any thread; everything else: the owner thread
//   owner_thread   written once at construction, read by any thread
//   loop           the owner thread only (it is cleared by the owner when the loop is destroyed)
//   tally_finishes, the owner thread only: the tasks finished on it, subtracted from the
//   tallies_        runtime's count at the end of each turn instead of one by one
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include <weft/detail/remote_inbox.hpp>
#include <weft/detail/task_counter.hpp>
#include <weft/detail/task_owner.hpp>
#include <weft/platform/driver.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>
#include <weft/telemetry.hpp>

namespace weft {
class event_loop;
}

namespace weft::detail {

class task_header;

class loop_shared final : public task_owner {
 public:
  loop_shared(std::size_t inbox_capacity, std::shared_ptr<telemetry_sink> sink, std::uint64_t owner_thread,
              const platform::driver_options& driver_options = {});
  loop_shared(const loop_shared&) = delete;
  loop_shared& operator=(const loop_shared&) = delete;

  // Any thread. User work, bounded: on refusal the item is destroyed unrun and the reason
  // returned (the first `full` of this loop is also reported to telemetry).
  submit_result submit_user(runnable* item);
  // Any thread. Internal work (wakes, completion notices) that must not be refused for capacity.
  // If the loop is gone the item is disposed of (a task reference released, a callback
  // destroyed unrun): its target no longer exists. The item may hold the last reference to this
  // loop; the call holds one of its own until its notification is given.
  void submit_internal(runnable* item) noexcept;
  // Any thread. Queues a poll of `task` (the caller transferred a reference): straight onto the
  // microtask queue when called on the owner thread, else through the inbox.
  void schedule_task(task_header* task) noexcept override;

  // Inline: asked on every wake and several times per poll.
  bool on_owner_thread() const noexcept { return platform::current_thread_id() == owner_thread; }

  // task_owner: the loop's tasks never leave its thread.
  bool polls_here() const noexcept override { return on_owner_thread(); }
  void task_finished(task_header* task) noexcept override;
  event_loop* home_loop() const noexcept override { return loop; }

  telemetry_sink& telemetry() const noexcept override { return *sink_; }
  const std::shared_ptr<telemetry_sink>& telemetry_ptr() const noexcept { return sink_; }

  // Any thread. Pushes user work without disposing of it on refusal (the caller decides).
  remote_inbox::push_result push_user(runnable* item);

  // Owner thread: subtracts the loop's finished tasks not yet subtracted from its counter (the
  // loop calls it at the end of every turn and of its shutdown; task_counter.hpp).
  void report_finishes() {
    if (tallies_.unreported_finishes != 0) counter->finished_many(std::exchange(tallies_.unreported_finishes, 0));
  }
  // Owner thread: takes one of those finishes over for a spawn's admission hold (task_counter.hpp);
  // false when there is none.
  bool take_finish_credit() noexcept { return tallies_.take_finish(); }

  // Laid out by who writes what: the fields every waker only reads first; then the inbox, whose
  // wake stack ends it, and the driver, whose token starts it, so that a cross-thread wake (push,
  // then notify) and the owner's drain (consume, then take) share one line; the owner's own
  // tallies last, on a line of their own.
  const std::uint64_t owner_thread;
  event_loop* loop = nullptr;  // owner thread only
  // Owner thread only: finishes are tallied (from the loop's construction until its shutdown
  // has reported them for the last time).
  bool tally_finishes = false;
  alignas(64) remote_inbox inbox;
  platform::driver driver;

 private:
  ~loop_shared() = default;
  void last_reference_dropped() noexcept override { delete this; }
  // tally_finishes is read only once the caller is known to be the owner thread.
  thread_tallies* tallies_of_this_thread() noexcept override {
    return on_owner_thread() && tally_finishes ? &tallies_ : nullptr;
  }

  sync::atomic<bool> overflow_reported_{false};
  std::shared_ptr<telemetry_sink> sink_;
  alignas(64) thread_tallies tallies_;  // owner thread only; its reference stash is unused
};

}  // namespace weft::detail
