// weft/detail/task_header.hpp — the type-independent part of a spawned task's heap cell.
//
// A cell starts either with its root coroutine frame (spawn of a task<T>) or with a factory and
// no frame yet (spawn of a factory, see factory_cell in task_cell.hpp): the first poll, on the
// owner thread, invokes the factory and takes the task it returns as the root. Either way the
// frame lives from the first poll to completion, and the factory (if any) until just after it.
//
// Who may touch what:
//   state                any thread (atomic; see task_state.hpp)
//   join_waker_slot      the joiner while join_waker is clear and the task not complete; read-only
//                        for everyone while join_waker is set; freed with the cell
//   everything else      the thread polling the task: root frame, awaited leaf, resume point.
//                        A loop's task (owner: loop_shared) is polled only on the loop's thread
//                        and never migrates; a stealing_pool's task (owner: pool_priority_owner)
//                        is polled by one pool worker at a time, each poll ordered after the
//                        previous one by the state word and the queue that carried it
//   owned-task links     the owner's: the loop's thread, or the pool worker that adopted the task
//
// The wait point (awaited leaf and resume point) and a small output share one 24-byte storage
// (`shared_`): the wait point lives from the cell's construction until the output is stored,
// which happens once, on the owner thread, after the frame is done or destroyed; nothing reads
// the wait point afterwards. A task_cell whose output does not fit keeps it in a member of its
// own (task_cell.hpp). This keeps a cell at 104 bytes (docs/benchmarks.md, task_memory).
// A wake from another thread touches only `state` and then hands the cell to its owner (a loop's
// remote inbox, a pool's injector); a polling thread does the poll. The cell is freed by whoever
// drops the last reference, on any thread, and only after completion (the owned-task list holds
// a reference until then), so the coroutine frame is always destroyed by a polling thread.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include <weft/detail/block_recycler.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/detail/task_counter.hpp>
#include <weft/detail/task_state.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/flavor.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/waker.hpp>

namespace weft::detail {

class task_owner;
// task_harness.hpp defines these; only task_cell.cpp needs them whole.
template <class Cell>
struct task_harness;
enum class poll_step;
enum class completion;

// The leaf a suspended task waits on, type-erased: poll(leaf, waker) returns true when ready.
struct leaf_poller {
  void* leaf = nullptr;
  bool (*poll)(void* leaf, const waker& w) = nullptr;
};

// The poll of a wait point that is ready at once (a yield): poll_frame resumes the frame without
// calling it.
inline bool leaf_ready_at_once(void*, const waker&) noexcept { return true; }

// The vtable of a task's borrowed waker (no reference held; cloning yields an owning waker).
extern const waker_vtable task_borrowed_waker_vtable;

class task_header : public runnable {
  // These five are declared first so that they fit in runnable's tail padding (a cell is
  // allocated per task; see docs/benchmarks.md, task_memory). The three flags share one byte;
  // only the thread that owns the task at the time writes any of them.
  bool adopted_ : 1 = false;     // owner thread after adoption; the submitting thread before it
  bool self_woken_ : 1 = false;  // owner thread, during a poll: the task woke itself (a yield)

 protected:
  bool factory_alive_ : 1 = false;  // factory_cell: its factory is constructed (owner thread, or
                                    // the submitting thread before adoption)

 private:
  std::uint16_t list_slot_ = 0;  // which of its owner's task lists holds it (a pool worker's)
  std::uint32_t id_;  // diagnostic: sequential per loop from 1 (wraps after 2^32 spawns); 0 for a
                      // task spawned from another thread

 public:
  // `root` may be null: the first poll then asks start_root() for it (a factory cell).
  task_header(task_owner* owner, std::uint32_t id, std::coroutine_handle<> root) noexcept;
  virtual ~task_header();

  // Bytes shared by the wait point and an output that fits (task_cell::output_shares_storage).
  static constexpr std::size_t shared_storage_bytes = 24;
  static constexpr std::size_t shared_storage_align = alignof(void*);

  // Cells come from the calling thread's block recycler; `delete` passes the dynamic type's size.
  static void* operator new(std::size_t size) { return block_recycler::allocate(size); }
  static void operator delete(void* p, std::size_t size) noexcept { block_recycler::deallocate(p, size); }

  // Once the whole cell is built (make_task_cell): the task exists from here on — counted in its
  // runtime's task count until it completes. (Not in the constructor: a factory whose move
  // throws in a derived constructor must leave nothing counted.) `hold`: the submission's
  // admission hold on that count, which the task takes over instead of counting itself.
  void mark_spawned(task_counter::admission_hold* hold = nullptr) noexcept;

  // runnable: one poll on the owner thread, consuming the queue entry's reference.
  void run() override;
  // The entry's reference only: the entry's `scheduled` stays in the state word until
  // cancel_at_shutdown completes the task. A discard may run on any thread (a wake into a dead
  // loop), so it touches nothing else.
  void discard() noexcept override { release(); }

  // Any thread. Ask for a poll (wake) or for cancellation (abort).
  void schedule_poll() noexcept;
  // Any thread: schedule_poll() by an owning waker that is used up by it (waker::wake() &&): the
  // waker's reference goes with the wake (task_state::transition_to_scheduled_by_value).
  void schedule_poll_by_value() noexcept;
  void request_cancel() noexcept;

  // Owner thread, at loop shutdown: destroy the frame and complete as cancelled.
  void cancel_at_shutdown() noexcept;

  // A cell that was never adopted by its loop (a cross-thread spawn that was refused, or still
  // queued when its loop was destroyed): destroy the frame unrun and complete with `error`.
  // Releases the owned-list and queue references. Any thread; the frame never ran.
  void abandon(join_error error) noexcept;

  // Owner thread: the loop took ownership (linked into its owned-task list).
  void mark_adopted() noexcept { adopted_ = true; }
  bool adopted() const noexcept { return adopted_; }
  // Owner thread: which of the owner's task lists the task was linked into at adoption (an owner
  // with one list leaves it 0).
  void set_list_slot(std::uint16_t slot) noexcept { list_slot_ = slot; }
  std::uint16_t list_slot() const noexcept { return list_slot_; }

  // Owner thread, from inside a poll: the coroutine `resume_at` suspended on `leaf`.
  void suspend_on(leaf_poller leaf, std::coroutine_handle<> resume_at) noexcept {
    wait_point& w = wait();
    WEFT_ASSERT(w.leaf.poll == nullptr);
    w.leaf = leaf;
    w.resume_at = resume_at;
  }

  // The leaf the task's next poll looks at first (in its frame), null before the first poll. Any
  // thread that holds the task's queue reference (a queued task's wait point does not change).
  const void* awaited_leaf() const noexcept { return wait().leaf.leaf; }

  // A waker for this task that does not own a reference: valid while the task is being polled.
  // Cloning it yields an owning waker. (Made on demand: the pair is constant, storing it in
  // every cell would cost 16 bytes per task.)
  waker borrowed_waker() const noexcept {
    return waker(raw_waker{&task_borrowed_waker_vtable, const_cast<task_header*>(this)});
  }
  waker make_waker() noexcept;

  void ref_inc() noexcept { state.ref_inc(); }
  // Drops `count` references (one operation however many).
  void release(std::uint64_t count = 1) noexcept {
    if (state.ref_dec(count)) delete this;
  }

  task_owner* owner() const noexcept { return owner_; }
  std::uint32_t id() const noexcept { return id_; }

  task_state state{task_state::initial_spawned};

 private:
  // Beside the state word: a wake from another thread reads the owner right after its CAS of
  // the state, and the cell's first 40 bytes (vtable, queue link, state, owner) are all it touches.
  task_owner* owner_;

 public:
  sync::cell<waker> join_waker_slot;

  // Owned-task list links (owner thread only).
  task_header* owned_prev = nullptr;
  task_header* owned_next = nullptr;

 protected:
  // Owner thread: the root frame finished; move its result (value or exception) into the output.
  virtual void store_root_result() noexcept = 0;
  // Owner thread: no value will come; store the error as the output.
  virtual void store_error(join_error error) noexcept = 0;
  // Owner thread, first poll of a cell spawned without a frame: create the root frame (invoke
  // the factory) and set_root() it. On failure (the factory threw or returned no task) store the
  // error as the output and return false.
  virtual bool start_root() noexcept = 0;
  // Destroys the root coroutine frame, then whatever the frame may refer to (the factory). Owner
  // thread, or the submitting thread for a cell that was never adopted.
  virtual void destroy_root() noexcept { destroy_frame(); }

  std::coroutine_handle<> root() const noexcept { return root_; }
  void set_root(std::coroutine_handle<> root) noexcept { root_ = root; }
  void destroy_frame() noexcept {
    if (root_) std::exchange(root_, {}).destroy();
  }
  // Destroys a stored output nobody will read.
  virtual void destroy_output() noexcept = 0;
  // The exception a stored `panicked` output carries (null otherwise).
  virtual std::exception_ptr stored_panic() const noexcept = 0;

  // The shared storage, for a task_cell that keeps its output there: it constructs the output
  // in it when the output is stored (which ends the wait point's life).
  void* shared_storage() noexcept { return shared_; }
  const void* shared_storage() const noexcept { return shared_; }

 private:
  // The state machine of wake, poll and completion (task_harness.hpp) calls the hooks below.
  friend struct task_harness<task_header>;
  bool polled_here() const noexcept;
  void note_self_wake() noexcept { self_woken_ = true; }
  void submit() noexcept;
  poll_step poll_frame() noexcept;
  void cancel_frame() noexcept {
    destroy_root();
    store_error(join_error(join_error::cancelled));
  }
  void leave_owner_list() noexcept;
  void drop_unread_output() noexcept;
  void count_finished() noexcept;
  void complete(completion how) noexcept;

  // What a suspended task waits on: the leaf to poll, and the coroutine to resume when it is
  // ready (null: the root). Lives in shared_ until the output is stored.
  struct wait_point {
    leaf_poller leaf;
    std::coroutine_handle<> resume_at;
  };
  static_assert(sizeof(wait_point) <= shared_storage_bytes);
  static_assert(alignof(wait_point) <= shared_storage_align);
  wait_point& wait() noexcept { return *std::launder(reinterpret_cast<wait_point*>(shared_)); }
  const wait_point& wait() const noexcept { return *std::launder(reinterpret_cast<const wait_point*>(shared_)); }
  void clear_wait() noexcept { wait() = wait_point{}; }

  std::coroutine_handle<> root_;
  alignas(shared_storage_align) std::byte shared_[shared_storage_bytes];
};

// What every task pays before its frame (docs/tasks-and-wakes.md), pinned so that a new field is
// a decision, not an accident: production build on a 64-bit target (the simulator's and the model
// checker's atomics are larger).
inline constexpr std::size_t task_header_bytes_max = 104;
static_assert(platform::flavor != platform::flavor_kind::real || sizeof(void*) != 8 ||
                  sizeof(task_header) <= task_header_bytes_max,
              "task_header grew: every task pays for it; raise task_header_bytes_max deliberately");

// The task being polled on the calling thread, or null outside polls. Inline: every leaf await
// asks for it.
struct current_task_tag;
using current_task_slot = platform::thread_slot<task_header, current_task_tag>;
inline task_header* current_task() noexcept { return current_task_slot::get(); }

}  // namespace weft::detail
