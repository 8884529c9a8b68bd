// weft/event_loop.hpp — one thread's event loop: microtasks, macrotasks, timers, remote inbox.
//
// A loop belongs to the thread that constructs it; only that thread drives it, spawns on it and
// queues microtasks. Other threads reach it through a thread_handle (macrotasks) or a waker.
//
// One turn, in this order:
//   1. driver events: I/O completions are delivered (each wakes its task, polled at this turn's
//      checkpoint); timers whose deadline has passed move to the macrotask queue;
//   2. remote inbox: everything queued by other threads is taken at once — task wakes join the
//      microtasks, callbacks join the macrotasks (so remote work never lands mid-checkpoint);
//   3. checkpoint: microtasks run until the queue is empty (task polls and queue_microtask
//      callbacks; more may be queued meanwhile);
//   4. one macrotask runs.
// A checkpoint that runs more than `starvation_checkpoint_threshold` microtasks while a macrotask
// is waiting reports `microtask_starvation` to telemetry (once per checkpoint; past the threshold
// it asks every `starvation_recheck_interval` microtasks).
//
// Driving calls (run, block_on, run_until_stalled, run_ready_tasks) may not nest: calling one from
// inside the loop throws usage_error (inside a task, that task then completes as panicked).
//
// run() returns when nothing is ready or queued, no timer is armed, no I/O operation is in flight
// and no loop thread (spawn_loop_thread) is alive; it then *closes* the remote inbox with a commit under the inbox lock (see
// remote_inbox.hpp), so a remote macrotask is either accepted and run before run() returns, or
// refused with `closed`. The next driving call reopens it. Suspended tasks that wait on something
// other than a timer or a child (e.g. a waker held by another thread) do not keep run() going;
// they stay owned by the loop and continue at the next drive. block_on waits for its task.
//
// Destroying the loop cancels every unfinished task on this thread (frames destroyed here,
// joiners woken with `cancelled`), cancels and reaps every I/O operation still in flight, destroys queued work unrun (reported to telemetry with its
// count), refuses later submissions with `closed`, and joins its loop threads.
#pragma once

#include <weft/compiler_support.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <weft/detail/loop_shared.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/detail/task_cell.hpp>
#include <weft/detail/task_counter.hpp>
#include <weft/detail/timer_heap.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/thread.hpp>
#include <weft/task.hpp>
#include <weft/telemetry.hpp>
#include <weft/thread_handle.hpp>

namespace weft {

class loop_thread_handle;

// Identifies a set_timeout / set_interval timer of one loop.
struct timer_id {
  std::uint64_t value = 0;
  friend bool operator==(timer_id, timer_id) = default;
};

namespace detail {
template <class F>
concept task_factory = std::invocable<F&> && is_task<std::invoke_result_t<F&>>::value;
// What a spawn takes: a task<T>, or a factory of one. A factory is kept in the task's cell and
// invoked at the first poll (factory_cell, task_cell.hpp). (A coroutine lambda's captures live in
// the closure, not in its frame: invoking a temporary closure and keeping only the task would
// leave the task pointing at a dead closure.)
template <class W>
struct spawn_value;
template <class T>
struct spawn_value<task<T>> {
  using type = T;
};
template <class F>
  requires task_factory<F>
struct spawn_value<F> {
  using type = typename std::invoke_result_t<F&>::value_type;
};
template <class W>
using spawn_value_t = typename spawn_value<std::decay_t<W>>::type;
template <class W>
concept spawnable = task_factory<std::decay_t<W>> || is_task<std::decay_t<W>>::value;

// The cell of a new task: takes over a task's frame, or keeps a factory for the first poll.
// Null when there is nothing to run (an empty task<T>). `hold`: the submission's admission hold,
// which the task's count takes over (task_header::mark_spawned).
template <class W>
task_cell<spawn_value_t<W>>* make_task_cell(task_owner* owner, std::uint32_t id, W&& work,
                                            task_counter::admission_hold* hold = nullptr) {
  task_cell<spawn_value_t<W>>* cell = nullptr;
  if constexpr (is_task<std::decay_t<W>>::value) {
    if (!work.valid()) return nullptr;
    cell = new task_cell<spawn_value_t<W>>(owner, id, std::move(work));
  } else {
    cell = new factory_cell<std::decay_t<W>>(owner, id, std::forward<W>(work));  // may throw: nothing counted
  }
  cell->mark_spawned(hold);
  return cell;
}
struct loop_thread_record;
}  // namespace detail

class event_loop {
 public:
  static constexpr std::size_t default_inbox_capacity = 65'536;
  static constexpr std::size_t starvation_checkpoint_threshold = 1'000;
  // Past the threshold, how often a checkpoint asks again whether a macrotask waits.
  static constexpr std::size_t starvation_recheck_interval = 64;

  struct options {
    std::size_t inbox_capacity = default_inbox_capacity;  // at least 1
    std::shared_ptr<telemetry_sink> telemetry;             // null: noop_telemetry()
    // Which I/O driver the loop runs on (automatic: io_uring where available, else epoll; the
    // WEFT_DRIVER environment variable decides when this is automatic). Forcing io_uring where it
    // is unavailable makes the constructor throw io_unavailable_error.
    io_driver_choice io_driver = io_driver_choice::automatic;
  };

  event_loop();
  explicit event_loop(options opts);
  ~event_loop();
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  // The loop driving on the calling thread, or null.
  static event_loop* current() noexcept;

  // ---- submitting work (owner thread) --------------------------------------------------------

  // Spawns a task; its first poll is a microtask. After destruction began: rejected.
  template <class T>
  join_handle<T> spawn(task<T> t) {
    return spawn_work(std::move(t));
  }
  // Spawns the task a factory returns. The factory is moved into the task and invoked at its
  // first poll, so the factory (a lambda's captures, say) lives exactly as long as the task and
  // state it creates is created on this loop's thread.
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto spawn(F&& factory) {
    return spawn_work(std::forward<F>(factory));
  }
  // spawn() of either a task<T> or a factory (detail::spawnable). `hold`: as make_task_cell's.
  template <class W>
  join_handle<detail::spawn_value_t<W>> spawn_work(W&& work, detail::task_counter::admission_hold* hold = nullptr) {
    using T = detail::spawn_value_t<W>;
    check_owner("spawn");
    if (shutting_down_) return join_handle<T>::rejected();
    detail::task_cell<T>* cell = detail::make_task_cell(shared_, next_task_id_, std::forward<W>(work), hold);
    if (cell == nullptr) return join_handle<T>::rejected();
    if (++next_task_id_ == 0) next_task_id_ = 1;  // 0 means "no id"
    adopt_spawned(cell);
    return join_handle<T>(cell);
  }

  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  void queue_microtask(F&& fn) {
    check_owner("queue_microtask");
    microtasks_.push_back(new detail::callback_runnable<std::decay_t<F>>(std::forward<F>(fn)));
  }
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  void queue_macrotask(F&& fn) {
    check_owner("queue_macrotask");
    macrotasks_.push_back(new detail::callback_runnable<std::decay_t<F>>(std::forward<F>(fn)));
  }

  // A sendable handle for macrotasks from other threads.
  thread_handle handle() const noexcept { return thread_handle(shared_); }

  // Starts a loop thread: a new platform thread with its own event_loop, runs fn there (as its
  // first macrotask; fn may take `event_loop&`), then that loop's run(). This loop's run() keeps
  // going until the child finished and was joined. Throws std::system_error if the thread cannot
  // be started.
  template <class F>
  loop_thread_handle spawn_loop_thread(F&& fn);
  // The former name, kept for one release: "worker" is the word for the runtime's pinned workers.
  template <class F>
  [[deprecated("use spawn_loop_thread")]] loop_thread_handle spawn_worker(F&& fn);

  // ---- timers (owner thread; callbacks run as macrotasks) -----------------------------------
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  timer_id set_timeout(duration delay, F&& fn) {
    return add_user_timer(delay, duration::zero(), new user_timer_of<std::decay_t<F>>(std::forward<F>(fn)));
  }
  // Fires every `period` (first after one period) until cleared.
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  timer_id set_interval(duration period, F&& fn) {
    if (period <= duration::zero()) throw usage_error("set_interval needs a positive period");
    return add_user_timer(period, period, new user_timer_of<std::decay_t<F>>(std::forward<F>(fn)));
  }
  // True if the timer was still pending (or repeating) and is now cancelled.
  bool clear_timer(timer_id id);

  // ---- driving (owner thread) ---------------------------------------------------------------
  void run();
  // Runs `t` to completion on this loop (other ready work runs too) and returns its value or
  // rethrows what it threw. `t` may borrow the caller's locals: its frame is destroyed before
  // block_on returns.
  template <class T>
  T block_on(task<T> t);
  // Runs everything that is ready (timers included) until nothing is; never blocks.
  void run_until_stalled();
  // Runs queued work (remote inbox, microtasks, macrotasks) until none is left, without
  // polling the driver: no timer or I/O callback runs. Never blocks.
  void run_ready_tasks();
  // Drives the loop (blocking on the driver when idle) until `done()` is true; done() is checked
  // after every turn. A wake-up for done() must come with a driver notification (any remote
  // submission, or notify()).
  template <class F>
  void run_until(F&& done) {
    drive_scope scope(*this, "run_until");
    for (;;) {
      turn(true);
      if (done()) return;
      if (has_ready_work()) continue;
      wait_for_events();
    }
  }
  // One turn (driver events, inbox, checkpoint, one macrotask); never blocks. Returns true when
  // the turn ran anything. `inbox_items`, if given, receives how many remote items it took.
  bool run_one_turn(std::size_t* inbox_items = nullptr);
  // True when a turn would find something to run now.
  bool has_ready_work();

  // What destruction did; shutdown() does it early (then the loop refuses everything).
  struct shutdown_report {
    std::uint64_t tasks_cancelled = 0;    // unfinished tasks cancelled on this thread
    std::uint64_t callbacks_discarded = 0;  // queued callbacks destroyed unrun
  };
  shutdown_report shutdown();
  bool is_shut_down() const noexcept { return shutting_down_; }

  // ---- observation ---------------------------------------------------------------------------
  std::size_t live_tasks() const noexcept { return live_tasks_; }
  std::size_t live_loop_threads() const noexcept { return live_children_; }
  [[deprecated("use live_loop_threads")]] std::size_t live_workers() const noexcept { return live_children_; }
  // Timers that are armed: not yet expired, not cancelled. They keep run() going.
  std::size_t armed_timers() const noexcept { return timers_.armed(); }
  // Entries the timer heap holds. A cancelled timer leaves the heap at once, so this equals
  // armed_timers(); it reads the heap itself, for tests that check what the heap retains.
  std::size_t timer_heap_entries() const noexcept { return timers_.size(); }
  bool is_driving() const noexcept { return driving_; }
  // Which I/O driver the loop runs on, and why not io_uring when it does not.
  io_driver_status io_status() const noexcept { return shared_->driver.status(); }
  // I/O operations submitted and not yet completed (abandoned ones included until reaped).
  std::size_t io_in_flight() const noexcept { return shared_->driver.in_flight(); }
  telemetry_sink& telemetry() const noexcept { return shared_->telemetry(); }

  // ---- runtime internals (used by leaves and the runtime; not for applications) -------------
  void arm_timer(detail::timer_node* node, instant deadline) { timers_.arm(node, deadline); }
  void cancel_timer(detail::timer_node* node) noexcept { timers_.cancel(node); }
  void push_microtask(detail::runnable* r) noexcept { microtasks_.push_back(r); }
  detail::loop_shared* shared() const noexcept { return shared_; }
  // Keeps run() from returning while positive (work the loop cannot see in its queues, timers,
  // children or driver).
  void add_keepalive(std::ptrdiff_t delta) noexcept { keepalive_ += delta; }

 private:
  // Marks the loop as driven by this thread for the scope's duration; throws usage_error when
  // the loop is already being driven (re-entry) or the caller is not the owner thread.
  class drive_scope {
   public:
    drive_scope(event_loop& loop, const char* what);
    ~drive_scope();
    drive_scope(const drive_scope&) = delete;
    drive_scope& operator=(const drive_scope&) = delete;

   private:
    event_loop& loop_;
    event_loop* previous_;
    void* previous_domain_;  // detail::poll_domain_slot before this drive
  };
  friend class detail::task_header;
  friend class detail::loop_shared;
  friend struct detail::loop_thread_record;
  friend class loop_thread_handle;

  // A set_timeout / set_interval timer: the id map holds the arming reference.
  class user_timer : public detail::timer_node {
   public:
    event_loop* loop = nullptr;
    std::uint64_t id = 0;
    duration period{};

   protected:
    virtual void invoke() = 0;

   private:
    void on_fire() override;
  };
  template <class F>
  class user_timer_of final : public user_timer {
   public:
    template <class G>
    explicit user_timer_of(G&& fn) : fn_(std::forward<G>(fn)) {}

   private:
    void invoke() override { fn_(); }
    F fn_;
  };
  template <class F>
  static detail::runnable* make_callback(F&& fn) {
    return new detail::callback_runnable<std::decay_t<F>>(std::forward<F>(fn));
  }
  timer_id add_user_timer(duration delay, duration period, user_timer* timer);

  void check_owner(const char* what) const {
    if (!shared_->on_owner_thread()) [[unlikely]] throw_not_owner(what);
  }
  [[noreturn]] static void throw_not_owner(const char* what);
  static std::size_t checked_capacity(std::size_t capacity);
  void adopt_spawned(detail::task_header* cell) noexcept;
  void task_finished(detail::task_header* cell) noexcept;

  // One turn, steps 1-4 above (step 1 only with poll_driver); returns how many items ran, and
  // stores how many of them came from the inbox in *inbox_items when given.
  std::size_t turn(bool poll_driver, std::size_t* inbox_items = nullptr);
  void poll_driver_events();
  bool timer_expired();
  std::size_t drain_remote();
  std::size_t run_checkpoint();
  bool run_one_macrotask();
  bool has_queued_work() const noexcept;
  bool io_completed() const noexcept;
  void wait_for_events();
  void run_guarded(detail::runnable* r) noexcept;
  void child_exited(detail::loop_thread_record* child);
  loop_thread_handle start_child(detail::runnable* entry);

  detail::loop_shared* shared_;
  detail::runnable_queue microtasks_;  // unbounded: local production is the owner's own work
  detail::runnable_queue macrotasks_;  // unbounded, as above; remote work is bounded by the inbox
  detail::timer_heap timers_;
  detail::task_header* owned_head_ = nullptr;  // every unfinished task, newest first
  std::size_t live_tasks_ = 0;
  std::uint32_t next_task_id_ = 1;
  std::unordered_map<std::uint64_t, user_timer*> user_timers_;  // looked up by id, never iterated
  std::uint64_t next_timer_id_ = 1;
  std::vector<std::shared_ptr<detail::loop_thread_record>> children_;  // live children, in start order
  std::size_t live_children_ = 0;
  std::ptrdiff_t keepalive_ = 0;
  bool driving_ = false;
  bool shutting_down_ = false;
  shutdown_report shutdown_report_{};
  bool inbox_closed_by_run_ = false;
};

// What spawn_loop_thread returns: the child's thread_handle, and whether it has finished.
class loop_thread_handle {
 public:
  loop_thread_handle() = default;
  const thread_handle& handle() const noexcept { return handle_; }
  bool is_finished() const noexcept;

 private:
  friend class event_loop;
  explicit loop_thread_handle(std::shared_ptr<detail::loop_thread_record> child, thread_handle h)
      : child_(std::move(child)), handle_(std::move(h)) {}
  std::shared_ptr<detail::loop_thread_record> child_;
  thread_handle handle_;
};

// The former name of loop_thread_handle, kept for one release.
using worker_handle [[deprecated("use loop_thread_handle")]] = loop_thread_handle;

namespace detail {

// The record of one loop thread, shared by parent and child.
struct loop_thread_record {
  platform::thread thread;
  sync::mutex lock;
  sync::condvar ready_cv;
  bool ready = false;               // under lock
  thread_handle child_handle;       // under lock until ready, then immutable
  sync::atomic<bool> finished{false};
};

// Calls fn with the loop if it takes one.
template <class F>
void invoke_loop_thread_entry(F& fn, event_loop& loop) {
  if constexpr (std::is_invocable_v<F&, event_loop&>) {
    fn(loop);
  } else {
    fn();
  }
}

}  // namespace detail

template <class F>
loop_thread_handle event_loop::spawn_loop_thread(F&& fn) {
  check_owner("spawn_loop_thread");
  if (shutting_down_) throw usage_error("spawn_loop_thread on a loop that is being destroyed");
  detail::runnable* entry = make_callback([f = std::decay_t<F>(std::forward<F>(fn))]() mutable {
    detail::invoke_loop_thread_entry(f, *event_loop::current());
  });
  return start_child(entry);
}

template <class F>
loop_thread_handle event_loop::spawn_worker(F&& fn) {
  return spawn_loop_thread(std::forward<F>(fn));
}

namespace detail {
// Spawns `work` (a task<T> or a factory) onto the loop behind `target` from any thread: the cell is
// created here and handed to the loop's inbox, which adopts it and polls it there. A refused
// submission completes at once as `rejected` (with the reason); the frame (or the factory) is
// destroyed unrun on this thread.
template <class W>
  requires spawnable<W>
join_handle<spawn_value_t<W>> spawn_remote(loop_shared* target, W&& work,
                                           task_counter::admission_hold* hold = nullptr) {
  using T = spawn_value_t<W>;
  task_cell<T>* cell = make_task_cell(target, 0, std::forward<W>(work), hold);
  if (cell == nullptr) return join_handle<T>::rejected();
  cell->set_kind(runnable_kind::task_spawn);
  const remote_inbox::push_result pushed = target->push_user(cell);
  if (pushed != remote_inbox::push_result::accepted) {
    cell->abandon(join_error::rejected_because(pushed == remote_inbox::push_result::full ? queue_error::full
                                                                                         : queue_error::closed));
  }
  return join_handle<T>(cell);
}
}  // namespace detail

template <class T>
T event_loop::block_on(task<T> t) {
  drive_scope scope(*this, "block_on");
  join_handle<T> h = spawn(std::move(t));
  for (;;) {
    turn(true);
    if (h.is_finished()) break;
    if (has_ready_work()) continue;
    wait_for_events();
  }
  auto result = h.join();
  if (!result) result.error().rethrow();
  if constexpr (!std::is_void_v<T>) return std::move(result).value();
}

}  // namespace weft
