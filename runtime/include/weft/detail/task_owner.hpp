// weft/detail/task_owner.hpp — what a task cell names as its owner: the scheduler that polls it.
//
// Two kinds exist: an event loop's shared part (loop_shared: the task never leaves that loop's
// thread) and one priority level of a stealing pool (pool_priority_owner: any of the pool's
// workers may poll it). A cell holds one reference to its owner from construction to destruction,
// so the owner outlives every waker that can still reach the cell.
//
// The reference count lives here, inline (a spawn and a free each touch it); what happens on the
// last release is the owner's own business (last_reference_dropped).
#pragma once

#include <cstddef>

#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>

namespace weft {
class event_loop;
class telemetry_sink;
}  // namespace weft

namespace weft::detail {

class task_header;
class task_counter;

class task_owner {
 public:
  task_owner() noexcept = default;
  task_owner(const task_owner&) = delete;
  task_owner& operator=(const task_owner&) = delete;

  void ref_inc() noexcept {
    // relaxed: the caller already holds a reference.
    refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    // acq_rel: the last owner must see every other owner's writes before tearing down.
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) last_reference_dropped();
  }

  // Any thread. Queues a poll of `task` (the caller transferred a reference).
  virtual void schedule_task(task_header* task) noexcept = 0;
  // Any thread: may the calling thread poll this owner's tasks?
  virtual bool polls_here() const noexcept = 0;
  // A thread polling one of the owner's tasks, as it completes: forget the task (owned list).
  virtual void task_finished(task_header* task) noexcept = 0;
  // The event loop whose thread polls the tasks, asked on that thread (timers and I/O need it);
  // null for a pool, whose tasks have no loop of their own.
  virtual event_loop* home_loop() const noexcept = 0;
  virtual telemetry_sink& telemetry() const noexcept = 0;

  task_counter* counter = nullptr;  // set before the owner is shared; counts its tasks

 protected:
  ~task_owner() = default;
  // The count reached zero: nothing references the owner any more.
  virtual void last_reference_dropped() noexcept = 0;

 private:
  sync::atomic<std::size_t> refs_{1};
};

// The owner of the task whose output the calling thread's last blocking join took
// (join_handle::join), until the thread's next spawn placement reads it (worker_picker.hpp): the
// worker that just finished work for this thread. Compared, never dereferenced.
struct last_joined_owner_tag;
using last_joined_owner_slot = platform::thread_slot<task_owner, last_joined_owner_tag>;

}  // namespace weft::detail
