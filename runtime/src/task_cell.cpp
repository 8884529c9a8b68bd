// task_cell.cpp — task_header: its poll of the coroutine and the hooks through which
// task_harness.hpp runs its wake, poll and completion paths (see task_header.hpp and
// task_state.hpp for the states and who may touch what; task_waker.cpp has its wakers).
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include <weft/detail/loop_shared.hpp>
#include <weft/detail/task_harness.hpp>
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

task_header::task_header(task_owner* owner, std::uint32_t id, std::size_t room_bytes,
                         std::coroutine_handle<> root) noexcept
    : runnable(runnable_kind::task_poll),
      room_words_(static_cast<std::uint8_t>(room_bytes / 8)),
      id_(id),
      owner_(owner) {
  WEFT_ASSERT(room_bytes % 8 == 0 && room_bytes / 8 <= 0xff && room_bytes >= sizeof(std::coroutine_handle<>));
  root_slot() = root;
  ::new (static_cast<void*>(shared_)) wait_point{};  // until the output is stored (task_header.hpp)
  owner_->ref_inc();
}

// The root handles of cells whose room another frame holds (room_use::foreign): a factory that
// made a frame first and returned another task. Rare, so one lock for all of them.
namespace {
struct foreign_root_table {
  std::mutex mutex;  // seam-ok: no seam operation while held, like the recycler's depot
  std::vector<std::pair<const task_header*, std::coroutine_handle<>>> roots;

  static foreign_root_table& get() noexcept {
    static foreign_root_table table;
    return table;
  }
  std::coroutine_handle<> find(const task_header* cell) {
    std::lock_guard lock(mutex);
    for (const auto& [owner, root] : roots) {
      if (owner == cell) return root;
    }
    return {};
  }
  std::coroutine_handle<> take(const task_header* cell) {
    std::lock_guard lock(mutex);
    for (auto it = roots.begin(); it != roots.end(); ++it) {
      if (it->first == cell) {
        const std::coroutine_handle<> root = it->second;
        *it = roots.back();
        roots.pop_back();
        return root;
      }
    }
    return {};
  }
};
}  // namespace

std::coroutine_handle<> task_header::foreign_root() const noexcept { return foreign_root_table::get().find(this); }

void task_header::set_root(std::coroutine_handle<> root) noexcept {
  switch (room_use_.load(std::memory_order_relaxed)) {
    case room_use::root_frame:
      WEFT_ASSERT(root.address() == room_start());
      return;
    case room_use::root_slot:
      root_slot() = root;
      return;
    case room_use::foreign:
    case room_use::foreign_gone: {
      foreign_root_table& table = foreign_root_table::get();
      std::lock_guard lock(table.mutex);
      table.roots.emplace_back(this, root);  // may throw bad_alloc: nothing sensible remains
      return;
    }
    case room_use::offered:
      break;
  }
  WEFT_ASSERT(false);  // settle_room comes first
}

void task_header::destroy_frame() noexcept {
  switch (room_use_.load(std::memory_order_relaxed)) {
    case room_use::root_frame: {
      // The frame's deallocation (placed_frame_gone) gives the room back to the root slot.
      std::coroutine_handle<>::from_address(room_start()).destroy();
      WEFT_ASSERT(room_use_.load(std::memory_order_relaxed) == room_use::root_slot);
      root_slot() = {};
      return;
    }
    case room_use::root_slot:
      if (root_slot()) std::exchange(root_slot(), {}).destroy();
      return;
    case room_use::foreign:
    case room_use::foreign_gone:
      if (std::coroutine_handle<> root = foreign_root_table::get().take(this)) root.destroy();
      return;
    case room_use::offered:
      break;
  }
  WEFT_ASSERT(false);
}

void task_header::settle_room(const frame_offer& offer, void* root_address) noexcept {
  room_use offered = room_use::offered;
  if (offer.taken == nullptr) {
    room_use_.store(room_use::root_slot, std::memory_order_relaxed);
    return;  // the room was not touched: the root slot still holds null
  }
  if (offer.taken == root_address) {
    // The task's own frame: nobody else has it, so nobody else changes the room's use.
    room_use_.store(room_use::root_frame, std::memory_order_relaxed);
    return;
  }
  // Another frame holds the room and may be anywhere: it keeps the cell alive until it goes.
  ref_inc();
  // acq_rel: publishes that reference to the frame's deallocation (placed_frame_gone), which
  // pairs with it; on failure, observes that deallocation's end.
  if (!room_use_.compare_exchange_strong(offered, room_use::foreign, std::memory_order_acq_rel)) {
    WEFT_ASSERT(offered == room_use::root_slot);  // the frame is gone already: the room is free
    state.ref_dec();  // not the last reference: the poll holds one
    root_slot() = {};
  }
}

void task_header::placed_frame_gone() noexcept {
  room_use seen = room_use_.load(std::memory_order_relaxed);
  for (;;) {
    switch (seen) {
      case room_use::root_frame:  // destroy_frame, on the polling thread
        room_use_.store(room_use::root_slot, std::memory_order_relaxed);
        return;
      case room_use::offered:  // the factory has not returned yet (settle_room sees this)
        if (room_use_.compare_exchange_weak(seen, room_use::root_slot, std::memory_order_acq_rel)) return;
        continue;
      case room_use::foreign:  // acq_rel: pairs with settle_room's publication of the reference
        if (room_use_.compare_exchange_weak(seen, room_use::foreign_gone, std::memory_order_acq_rel)) {
          release();
          return;
        }
        continue;
      case room_use::root_slot:
      case room_use::foreign_gone:
        break;
    }
    WEFT_ASSERT(false);  // no frame holds the room
    return;
  }
}

void frame_placement_released(void* frame, std::size_t size) noexcept {
  auto* cell = reinterpret_cast<task_header*>(static_cast<std::byte*>(frame) + round_frame(size));
  cell->placed_frame_gone();
}

void task_header::mark_spawned() noexcept {
  if (owner_->counter) owner_->counter->started();
  WEFT_TRACE_TASK(spawned, this);
}

task_header::~task_header() { owner_->release(); }

bool task_header::polled_here() const noexcept { return current_task_slot::get() == this; }

void task_header::submit() noexcept { owner_->schedule_task(this); }

void task_header::schedule_poll() noexcept { task_harness<task_header>::schedule_poll(*this); }

void task_header::schedule_poll_by_value() noexcept { task_harness<task_header>::schedule_poll_by_value(*this); }

void task_header::request_cancel() noexcept { task_harness<task_header>::request_cancel(*this); }

void task_header::run() {
  WEFT_ASSERT(owner_->polls_here());  // a loop's tasks never leave its thread; a pool's stay in it
  task_harness<task_header>::run(*this);
}

poll_step task_header::poll_frame() noexcept {
  (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop between task steps
  task_header* const outer = current_task_slot::get();
  current_task_slot::set(this);
  bool resume = true;
  wait_point& waiting = wait();
  if (waiting.leaf.poll != nullptr) {
    // The leaf decides; a leaf that throws reports ready and rethrows at its co_await.
    resume = waiting.leaf.poll(waiting.leaf.leaf, borrowed_waker());
  } else if (!root()) {
    // First poll of a factory cell: the factory runs here, on the owner thread, inside the poll.
    if (!start_root()) {  // it threw or made no task: the error is stored as the output
      current_task_slot::set(outer);
      self_woken_ = false;
      destroy_root();
      return poll_step::finished;
    }
  }
  if (resume) {
    const std::coroutine_handle<> next = waiting.resume_at ? waiting.resume_at : root();
    waiting = wait_point{};
    next.resume();  // runs until the task suspends on a leaf or finishes
  }
  current_task_slot::set(outer);
  const bool self_woken = self_woken_;
  self_woken_ = false;

  if (root().done()) {
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

void task_header::complete(bool from_idle) noexcept { task_harness<task_header>::complete(*this, from_idle); }

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

void task_header::count_finished() noexcept {
  if (owner_->counter) owner_->counter->finished();
}

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
