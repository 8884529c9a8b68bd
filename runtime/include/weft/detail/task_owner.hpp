// weft/detail/task_owner.hpp — what a task cell names as its owner: the scheduler that polls it.
//
// Two kinds exist: an event loop's shared part (loop_shared: the task never leaves that loop's
// thread) and one priority level of a stealing pool (pool_priority_owner: any of the pool's
// workers may poll it). A cell holds one reference to its owner from construction to destruction,
// so the owner outlives every waker that can still reach the cell.
//
// The reference count lives here, inline (a spawn and a free each touch it); what happens on the
// last release is the owner's own business (last_reference_dropped).
//
// A stealing pool's owner is shared by all its workers, and one count every spawn and every free
// increments and decrements moves its cache line between cores at each task. So each pool worker
// keeps a stash of references of its own (its thread_tallies): it takes `owner_reference_batch` in
// one operation when its stash is empty, hands one out per spawn on that worker and takes one back
// per free there, without touching the count, and returns any excess above
// `owner_reference_stash_max` in one operation. Invariants:
//   * refs_ = the references held (by cells, handles, the pool) + every worker's stash; a stash is
//     touched only by its worker's thread.
//   * A worker returns its whole stash when it exits, before the pool lets go of its owners; so
//     the count reaches zero only when nothing holds a reference and no stash is left, and a
//     return of excess never reaches zero (the stash keeps `owner_reference_batch`).
//
// A thread's tallies also hold the tasks of the owner that finished on it and are not yet
// subtracted from the owner's task counter (task_counter.hpp): a pool worker's per level, an
// event loop's for its one thread (an event loop keeps no reference stash: one thread's spawns
// and frees do not move the count's line).
#pragma once

#include <cstddef>
#include <utility>

#include <weft/detail/task_counter.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>

namespace weft {
class event_loop;
class telemetry_sink;
}  // namespace weft

namespace weft::detail {

class task_header;
class task_counter;

// A pool worker's stash of owner references (the head of this file): filled this many at a time,
// and given back down to that when it holds more than the maximum.
inline constexpr std::size_t owner_reference_batch = 64;
inline constexpr std::size_t owner_reference_stash_max = 2 * owner_reference_batch;

// What one pool worker keeps for one owner, touched only by that worker's thread: its stash of
// references (above) and the tasks finished there not yet subtracted from the owner's counter
// (task_counter.hpp).
struct thread_tallies {
  std::size_t reference_stash = 0;
  std::size_t unreported_finishes = 0;

  // Takes one unreported finish over for a spawn's admission hold (task_counter.hpp); false
  // when there is none.
  bool take_finish() noexcept {
    if (unreported_finishes == 0) return false;
    --unreported_finishes;
    return true;
  }
};

class task_owner {
 public:
  task_owner(const task_owner&) = delete;
  task_owner& operator=(const task_owner&) = delete;

  void ref_inc() noexcept {
    if (thread_tallies* mine = reference_tallies()) {
      if (mine->reference_stash == 0) {
        // relaxed: the caller already holds a reference (as below).
        refs_.count.fetch_add(owner_reference_batch, std::memory_order_relaxed);
        mine->reference_stash = owner_reference_batch;
      }
      --mine->reference_stash;
      return;
    }
    // relaxed: the caller already holds a reference.
    refs_.count.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    if (thread_tallies* mine = reference_tallies()) {
      if (++mine->reference_stash > owner_reference_stash_max) {
        const std::size_t excess = mine->reference_stash - owner_reference_batch;
        mine->reference_stash = owner_reference_batch;
        // acq_rel: as below; never the last (the stash keeps some).
        const std::size_t prior = refs_.count.fetch_sub(excess, std::memory_order_acq_rel);
        WEFT_ASSERT(prior > excess);
        (void)prior;
      }
      return;
    }
    release_references(1);
  }
  // Drops `n` references at once (a worker's stash as it exits).
  void release_references(std::size_t n) noexcept {
    // acq_rel: the last owner must see every other owner's writes before tearing down.
    const std::size_t prior = refs_.count.fetch_sub(n, std::memory_order_acq_rel);
    WEFT_ASSERT(prior >= n);
    if (prior == n) last_reference_dropped();
  }

  // The polling thread, once a task of this owner completed: count it finished, at once or, on a
  // pool worker, in the worker's next batch (task_counter.hpp).
  void count_finished();

  // Any thread. Queues a poll of `task` (the caller transferred a reference).
  virtual void schedule_task(task_header* task) noexcept = 0;
  // Any thread: may the calling thread poll this owner's tasks?
  virtual bool polls_here() const noexcept = 0;
  // Is the calling thread polling this owner's tasks now: driving its loop, or a worker of its
  // pool? A thread-local read and a compare, for the check at every poll; polls_here() answers
  // the broader question anywhere.
  bool polling_now() const noexcept;
  // A thread polling one of the owner's tasks, as it completes: forget the task (owned list).
  virtual void task_finished(task_header* task) noexcept = 0;
  // The event loop whose thread polls the tasks, asked on that thread (timers and I/O need it);
  // null for a pool, whose tasks have no loop of their own.
  virtual event_loop* home_loop() const noexcept = 0;
  virtual telemetry_sink& telemetry() const noexcept = 0;

  task_counter* counter = nullptr;  // set before the owner is shared; counts its tasks

 protected:
  // Every owner keeps per-thread tallies of its finished tasks (tallies_of_this_thread);
  // `stash_references`: of its references too (a stealing pool's level; an event loop has one
  // thread, so its references gain nothing from a stash).
  explicit task_owner(bool stash_references) noexcept : stash_references_(stash_references) {}
  ~task_owner() = default;
  // What a polling thread names in poll_domain_slot while it polls this owner's tasks: the loop's
  // shared part, or the pool (all its levels alike). Set before the owner is shared.
  void set_poll_domain(void* domain) noexcept { poll_domain_ = domain; }
  // The count reached zero: nothing references the owner any more.
  virtual void last_reference_dropped() noexcept = 0;
  // The calling thread's tallies for this owner, or null.
  virtual thread_tallies* tallies_of_this_thread() noexcept = 0;

 private:
  thread_tallies* reference_tallies() noexcept { return stash_references_ ? tallies_of_this_thread() : nullptr; }

  const bool stash_references_;
  void* poll_domain_ = nullptr;
  // A line of its own: spawns and frees on any thread write it, while the owner's other fields
  // (and a derived owner's) are read by every completion. A member of a struct of a line's size,
  // not a bare aligned member: the rest of that member's line would be the class's tail padding,
  // where the ABI lays out the fields of a derived owner.
  struct alignas(64) reference_count {
    sync::atomic<std::size_t> count{1};
  };
  reference_count refs_;
};

// The owner whose tasks the calling thread polls now, as task_owner::set_poll_domain names it:
// set by an event loop's drive (and restored after) and by a pool worker for its lifetime.
struct poll_domain_tag;
using poll_domain_slot = platform::thread_slot<void, poll_domain_tag>;

inline bool task_owner::polling_now() const noexcept {
  return poll_domain_ != nullptr && poll_domain_slot::get() == poll_domain_;
}

inline void task_owner::count_finished() {
  if (counter == nullptr) return;
  if (thread_tallies* mine = tallies_of_this_thread()) {
    if (++mine->unreported_finishes >= finished_batch) {
      counter->finished_many(std::exchange(mine->unreported_finishes, 0));
    }
    return;
  }
  counter->finished();
}

// The owner of the task whose output the calling thread's last blocking join took
// (join_handle::join), until the thread's next spawn placement reads it (worker_picker.hpp): the
// worker that just finished work for this thread. Compared, never dereferenced.
struct last_joined_owner_tag;
using last_joined_owner_slot = platform::thread_slot<task_owner, last_joined_owner_tag>;

}  // namespace weft::detail
