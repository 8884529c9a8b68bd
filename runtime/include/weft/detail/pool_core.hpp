// weft/detail/pool_core.hpp — the shared heart of a weft::stealing_pool.
//
// Queues: per worker and priority a local work_deque (its owner pushes and pops, others steal
// half) and a LIFO slot (the task last spawned there, run next; only the worker itself sees it);
// per priority a global pool_injector. A task spawned on one of the pool's workers goes to that
// worker's LIFO slot, displacing the previous one into the local queue; a task woken or yielding
// there goes to the local queue, or, when that is full or already has tasks waiting behind it, to
// the worker's overflow (a FIFO only its thread touches; it refills the local queue, where
// thieves can reach the tasks, whenever that falls below half full); one scheduled from any other
// thread goes to the injector and wakes at most one parked worker (pool_idle.hpp). Tasks move
// between workers; a cell's owner is the pool_priority_owner of its priority, so a wake re-queues
// the task at the priority it was spawned with.
//
// Admission and the task lists: a spawn holds a task_counter::admission_hold, checks
// `admitting_`, makes the cell and queues it. The worker that polls a task first adopts it: links
// it into that worker's own task list, which only that worker's thread touches, and records the
// worker in the cell (task_header::list_slot). A task that completes on that worker unlinks
// itself there; one that completes on another worker, having moved, is handed back to it on the
// worker's `finished_elsewhere` stack (the handing worker adds a cell reference, released once
// the adopting worker has unlinked it), which the worker empties when it runs out of work, every
// `pool_handback_drain_interval` polls, and before it sweeps or exits. So a spawn and a
// completion take no lock.
//
// Immediate stop: cancel_all() closes admission, sets `cancel_requested_` and wakes every worker;
// each worker then, between two polls, empties its stack, asks every task on its list to cancel
// and closes the list. A task adopted by a worker whose list is closed is asked to cancel at once
// (its first poll completes it as cancelled). Every accepted task is queued until its first poll
// and on a list from then until it completes, so none escapes a stop; and a drain's zero count
// means every accepted task finished (task_counter.hpp).
//
// Lifetime: the core is freed when the pool handle and all three priority owners (each held by
// its tasks' cells) have let go of it; workers are joined by stop() before the handle lets go.
//
//   field                who touches it
//   config_, workers_    immutable after start()
//   worker queues        work_deque's own rules; the rest of a pool_worker: its thread only,
//                        except the stats counters (written by it, read relaxed by stats()) and
//                        finished_elsewhere (any worker pushes, its own worker takes)
//   admitting_, exit_,   any thread (atomics)
//   cancel_requested_
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <weft/detail/handback_stack.hpp>
#include <weft/detail/pool_idle.hpp>
#include <weft/detail/pool_injector.hpp>
#include <weft/detail/runnable_ring.hpp>
#include <weft/detail/task_cell.hpp>
#include <weft/detail/task_counter.hpp>
#include <weft/detail/task_owner.hpp>
#include <weft/detail/work_deque.hpp>
#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/parker.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/pool_stats.hpp>
#include <weft/priority.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/telemetry.hpp>

namespace weft::detail {

struct pool_config {
  static constexpr std::size_t workers_max = 8'192;  // as runtime_config::workers_max; a cell's
                                                     // list_slot holds a worker index
  static constexpr std::uint32_t weight_max = 1'024;  // opportunities per priority per cycle
  static constexpr std::uint32_t local_burst_max = 1'000'000;

  std::optional<std::size_t> workers;  // unset: platform::hardware_concurrency()
  std::array<std::uint32_t, priority_count> weights{8, 4, 1};
  std::uint32_t local_burst = 32;  // local pops in a row before the injector is looked at first
  bool stats = true;
  std::shared_ptr<telemetry_sink> telemetry;
};

// The most runnables a worker moves from an injector to its local queue in one go.
inline constexpr std::size_t pool_injector_batch_max = 32;
// LIFO-slot takes in a row before the slot's task goes behind the local queue (tokio's bound).
inline constexpr std::uint32_t pool_lifo_streak_max = 3;
// Below this many tasks in a local queue, a worker moves tasks from its overflow into it.
inline constexpr std::size_t pool_local_refill_below = work_deque_capacity / 2;
// Polls a worker runs between two looks at its finished_elsewhere stack while it has work: the
// cells on it wait for that to be freed.
inline constexpr std::uint32_t pool_handback_drain_interval = 64;

class pool_core;

// One priority level of a pool, as the owner its tasks' cells name.
class pool_priority_owner final : public task_owner {
 public:
  pool_priority_owner() noexcept : task_owner(/*stash_references=*/true) {}
  void bind(pool_core* core, priority p) noexcept {
    core_ = core;
    priority_ = p;
    set_poll_domain(core);
  }
  priority level() const noexcept { return priority_; }

  void schedule_task(task_header* task) noexcept override;
  bool polls_here() const noexcept override;
  void task_finished(task_header* task) noexcept override;
  event_loop* home_loop() const noexcept override { return nullptr; }
  telemetry_sink& telemetry() const noexcept override;

 private:
  void last_reference_dropped() noexcept override;
  thread_tallies* tallies_of_this_thread() noexcept override;

  pool_core* core_ = nullptr;
  priority priority_ = priority::normal;
};

// Cheap counters a worker keeps about itself (relaxed: statistics, no data hangs on them).
struct pool_worker_counters {
  sync::atomic<std::uint64_t> polls{0};
  sync::atomic<std::uint64_t> steals{0};          // successful steal operations
  sync::atomic<std::uint64_t> stolen{0};          // runnables taken by them
  sync::atomic<std::uint64_t> injector_batches{0};
  sync::atomic<std::uint64_t> parks{0};
  sync::atomic<std::uint64_t> spawned_local{0};   // submissions made on this worker

  void bump(sync::atomic<std::uint64_t>& c, std::uint64_t by = 1) noexcept {
    // relaxed: only this worker writes; readers want an estimate.
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
};

struct pool_worker {
  pool_worker(pool_core& pool, std::size_t index) noexcept : pool(pool), index(index) {}

  pool_core& pool;
  const std::size_t index;
  std::array<work_deque<runnable>, priority_count> local;
  platform::parker parker;  // a loop thread's: a worker's wakes come in the same rhythm
  pool_worker_counters counters;
  // Per priority: overflow's size, for stats() (written by this worker only, as the counters).
  std::array<sync::atomic<std::size_t>, priority_count> overflow_size{};
  platform::thread thread;

  // Thread-only state.
  std::array<std::int64_t, priority_count> selector_credit{};  // smooth weighted round robin
  // Per priority: local pops in a row at that level since its injector was last looked at first.
  // Per level, because a miss at an empty level says nothing about the injector of a busy one.
  std::array<std::uint32_t, priority_count> burst{};
  std::array<runnable*, priority_count> lifo{};  // per priority: the task spawned here last
  // Per priority: tasks queued here behind a full local queue, newer than all of its own.
  std::array<runnable_ring, priority_count> overflow;
  std::uint32_t lifo_streak = 0;                  // LIFO-slot takes in a row
  std::size_t next_victim = 0;    // where the next steal round starts, in [0, workers)
  bool searching = false;         // counted as searching by pool_idle (a waker woke it)
  std::uint32_t budget = 0;       // coop_budget of the poll in progress
  std::uint32_t next_task_id = 0;
  // Per priority: the references to that level's owner this worker holds for its spawns and
  // frees, and the tasks of that level finished here not yet subtracted from the pool's count
  // (task_owner.hpp); both go back when the worker runs out of work (the count) or exits.
  std::array<thread_tallies, priority_count> tallies{};
  // The tasks this worker adopted and that have not completed (or were handed back but not yet
  // unlinked), newest first, linked through their owned-task links.
  task_header* owned_head = nullptr;
  bool list_closed = false;  // swept by a stop: a task adopted from now on cancels at once
  std::uint32_t polls_since_drain = 0;

  // Any worker pushes: cells adopted here that completed on another worker, each holding a
  // reference for this worker to release once it has unlinked the cell. A line of its own: the
  // other workers write it.
  alignas(64) handback_stack finished_elsewhere;
};

class pool_core {
 public:
  explicit pool_core(pool_config config);
  ~pool_core();
  pool_core(const pool_core&) = delete;
  pool_core& operator=(const pool_core&) = delete;

  // Starts the workers; on failure stops those started and throws start_error.
  void start();

  const pool_config& config() const noexcept { return config_; }
  std::size_t worker_count() const noexcept { return workers_.size(); }
  telemetry_sink& telemetry() const noexcept { return *config_.telemetry; }
  task_counter& tasks() noexcept { return tasks_; }
  pool_priority_owner& owner(priority p) noexcept { return owners_[index_of(p)]; }

  bool admitting() const noexcept {
    // seq_cst: the load of the store-load pair with close_admission() (task_counter.hpp).
    return admitting_.load(std::memory_order_seq_cst);
  }
  void close_admission() noexcept {
    // seq_cst: the store of that pair; drain() loads the task count after it.
    admitting_.store(false, std::memory_order_seq_cst);
  }

  // The pool worker running on the calling thread, if it is one of ours.
  pool_worker* current_worker() const noexcept;

  // A spawn: see the head of this file. `work` is a task<T> or a factory of one.
  template <class W>
  join_handle<spawn_value_t<W>> spawn(priority p, W&& work) {
    using T = spawn_value_t<W>;
    pool_worker* here = current_worker();
    // A drain waits for this spawn from here.
    task_counter::admission_hold hold(tasks_, here != nullptr && take_finish_credit(*here));
    if (!admitting()) return join_handle<T>::rejected(queue_error::closed);
    // The task's count takes the hold over (task_counter.hpp).
    task_cell<T>* cell = make_task_cell(&owner(p), next_task_id(here), std::forward<W>(work), &hold);
    if (cell == nullptr) return join_handle<T>::rejected(queue_error::closed);
    count_spawn(here);
    admit(cell, here);
    return join_handle<T>(cell);
  }

  // Any thread: queue a poll of `task` at priority `p` (the caller transferred a reference).
  void schedule(priority p, task_header* task) noexcept;

  // Immediate stop: closes admission and has every worker cancel the tasks on its list (the head
  // of this file). Returns at once; the cancellations happen on the workers.
  void cancel_all() noexcept;
  // After stop_workers(): how many tasks the stop asked to cancel, those unfinished on a list when
  // its worker swept it plus those adopted after that.
  std::uint64_t cancelled_by_stop() const noexcept {
    // relaxed: read after joining the workers, which wrote it.
    return cancelled_by_stop_.load(std::memory_order_relaxed);
  }
  // Tells the workers to leave once out of work, wakes them all and joins them (not from a
  // worker). Runnables still queued after that (none after a drain) are discarded.
  void stop_workers() noexcept;
  bool workers_stopped() const noexcept { return workers_stopped_; }

  pool_stats stats() const noexcept;

  // Reference counting of the core itself (the handle and the three owners).
  void core_ref_release() noexcept;

  // A completing task leaves its adopting worker's list (pool_priority_owner::task_finished).
  void task_finished(task_header* task) noexcept;

 private:
  // Takes one of the worker's finished tasks not yet subtracted from the count, for a spawn's
  // admission hold to keep (task_counter.hpp); false when it has none.
  static bool take_finish_credit(pool_worker& w) noexcept;
  std::uint32_t next_task_id(pool_worker* here) noexcept;
  void count_spawn(pool_worker* here) noexcept;
  // Queues the new cell's first poll.
  void admit(task_header* cell, pool_worker* here) noexcept;
  void adopt(pool_worker& w, task_header* cell) noexcept;
  static void unlink(pool_worker& w, task_header* cell) noexcept;
  void drain_finished_elsewhere(pool_worker& w) noexcept;
  void sweep_for_stop(pool_worker& w) noexcept;

  void worker_main(pool_worker& w) noexcept;
  runnable* find_work(pool_worker& w) noexcept;
  // The levels any task has been admitted at, one bit each. A hint: a bit not yet seen set only
  // makes a worker pass its level over until it is about to go idle (find_work), where every
  // level is looked at.
  unsigned levels_in_use() const noexcept {
    // relaxed: the mask publishes nothing; the queues carry the tasks and their own ordering.
    return levels_used_.load(std::memory_order_relaxed);
  }
  runnable* take_at(pool_worker& w, std::size_t level) noexcept;
  runnable* take_from_injector(pool_worker& w, std::size_t level) noexcept;
  runnable* steal(pool_worker& w, std::size_t level) noexcept;
  std::size_t pick_level(pool_worker& w) noexcept;
  bool any_work_visible() const noexcept;
  void park(pool_worker& w) noexcept;
  void run(pool_worker& w, runnable* r) noexcept;
  void report_finishes(pool_worker& w) noexcept;
  void push_local(pool_worker& w, std::size_t level, runnable* r) noexcept;
  // Moves the oldest of the overflow at `level` into the local queue while it has room, and wakes
  // a parked worker if one is wanted (it can steal them now). False when the overflow is empty.
  bool refill_local(pool_worker& w, std::size_t level) noexcept;
  // refill_local() when tasks wait in the overflow and the local queue holds fewer than
  // pool_local_refill_below; true when it refilled.
  bool top_up_local(pool_worker& w, std::size_t level) noexcept;
  void push_lifo(pool_worker& w, std::size_t level, runnable* r) noexcept;
  void push_injector(std::size_t level, runnable* r) noexcept;
  void wake_one() noexcept;

  pool_config config_;
  std::array<pool_priority_owner, priority_count> owners_;
  std::array<pool_injector, priority_count> injectors_;
  std::vector<std::unique_ptr<pool_worker>> workers_;
  std::unique_ptr<pool_idle> idle_;
  std::int64_t weight_total_ = 0;
  // A line of its own: every spawn, from any thread, writes its count, while workers_ above is
  // read by every completion.
  alignas(64) task_counter tasks_;

  // Read by every spawn or every worker loop, written once each: a line of their own, apart from
  // the counters below that submitters write.
  alignas(64) sync::atomic<bool> admitting_{true};
  // Bit p: a task was admitted at level p (set once, never cleared). A pool whose work is all at
  // one level lets its workers skip the others without looking at their queues or weighing them.
  sync::atomic<unsigned> levels_used_{0};
  sync::atomic<bool> exit_{false};
  sync::atomic<bool> cancel_requested_{false};
  // Tasks a stop asked to cancel: those on a list its worker swept, plus those adopted after.
  alignas(64) sync::atomic<std::uint64_t> cancelled_by_stop_{0};
  sync::atomic<std::uint64_t> spawned_external_{0};
  sync::atomic<std::uint64_t> wake_notifications_{0};
  sync::atomic<std::uint32_t> external_task_ids_{0};
  sync::atomic<std::size_t> core_refs_{1 + priority_count};  // the handle and the three owners
  bool workers_stopped_ = false;  // the stopping thread only
};

}  // namespace weft::detail
