// task_state_model.cpp — Relacy model of weft::detail::task_state (detail/task_state.hpp), the
// production state word of a task cell compiled against the model flavor of the seam, driven the
// way task_header drives it (runtime/src/task_cell.cpp: schedule_poll, schedule_poll_by_value,
// request_cancel, run, complete, release), including the yield path (a wake from inside the
// task's own poll). The model's cell is a heap object (Relacy tracks it) with a "frame" that every
// poll writes and the destructor touches, like a coroutine frame.
//
// Invariants:
//   * no lost wake-up: a wake that happens while the task is idle, queued or running leads to a
//     poll that sees what the waker wrote before waking (the poll reads a relaxed `ready` flag,
//     so only the state word's release/acquire pairs make it visible; a lost wake leaves the
//     owner waiting forever: LIVELOCK);
//   * coalescing: at most one queue entry exists at a time (each owns a reference);
//   * no poll after completion, completion once (the production asserts);
//   * a waker may outlive the task: its late wake is a no-op and its reference drop may be the
//     last one;
//   * exactly one deallocation, by whoever drops the last reference, after every other owner's
//     writes (a missing acquire/release on the count is a DATA RACE on the frame; a missing or
//     extra reference is a leak, a double free or an access to freed memory).
#include <weft/detail/task_state.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::detail::task_state;

struct model_task {
  task_state state{task_state::initial_spawned + task_state::ref_one};  // + the waker thread's clone
  weft::sync::cell<int> frame{0};  // owner thread only, and the destructor
};

// The parts of a loop the task touches: its run queue (an inbox: any thread pushes under a lock,
// the owner pops) and the record of deallocations.
struct model_loop {
  weft::sync::mutex lock;
  weft::sync::cell<int> queued{1};  // queue entries for the task (it starts queued)
  weft::sync::atomic<int> deallocations{0};
  weft::sync::atomic<int> ready{0};  // what the waker publishes; the poll reads it relaxed

  void push() {
    weft::sync::lock_guard<weft::sync::mutex> hold(lock);
    queued.with_mut([](int& n) {
      RL_ASSERT(n == 0);  // coalescing: never two entries for one task
      ++n;
    });
  }
  bool pop() {
    weft::sync::lock_guard<weft::sync::mutex> hold(lock);
    return queued.with_mut([](int& n) {
      if (n == 0) return false;
      --n;
      return true;
    });
  }

  // task_header::release.
  void release(model_task* t) {
    if (t->state.ref_dec()) {
      t->frame.with_mut([](int& f) { f = -1; });  // the destructor touches the frame
      delete t;
      deallocations.fetch_add(1, std::memory_order_relaxed);  // read in after()
    }
  }
  // task_header::schedule_poll / request_cancel from another thread: the added reference goes
  // with the queue entry.
  void wake(model_task* t) {
    if (t->state.transition_to_scheduled() == task_state::wake_action::submit) push();
  }
  // task_header::schedule_poll_by_value (waker::wake() &&) from another thread: the waker's own
  // reference goes with the queue entry, or is dropped when no entry is queued.
  void wake_by_value(model_task* t) {
    if (t->state.transition_to_scheduled_by_value() == task_state::wake_action::submit) {
      push();
    } else {
      release(t);  // coalesced or late: maybe the last reference
    }
  }
  void abort(model_task* t) {
    if (t->state.transition_to_cancel_requested() == task_state::wake_action::submit) push();
  }

  // task_header::run on the owner thread; returns true when the task completed. The first poll
  // yields (wakes its own task from inside the poll: task_header's owner-thread self_woken_ flag,
  // no atomic), so the re-queue without a new reference is checked against the other threads.
  bool run(model_task* t) {
    bool completed = false;
    switch (t->state.transition_to_running()) {
      case task_state::poll_action::poll: {
        const bool self_woken = t->frame.with_mut([](int& f) { return ++f == 1; });  // the coroutine runs
        // relaxed: the state word's acquire (transition_to_running) must be what orders this.
        if (!self_woken && ready.load(std::memory_order_relaxed) != 0) {
          (void)t->state.transition_to_complete();
          completed = true;
          release(t);  // the owned-task list's reference
        } else if (t->state.transition_to_idle(self_woken) == task_state::idle_action::reschedule) {
          push();  // the owner re-queues it: the poll's queue reference goes with the new entry
          return false;
        } else {
          return false;  // idle: the transition dropped the queue entry's reference
        }
        break;
      }
      case task_state::poll_action::cancel:
        t->frame.with_mut([](int& f) { f = 0; });  // the frame is destroyed
        (void)t->state.transition_to_complete();
        completed = true;
        release(t);
        break;
    }
    release(t);  // the queue entry's reference
    return completed;
  }

  // The join handle goes first: it drops its interest and its reference.
  void drop_join_handle(model_task* t) {
    (void)t->state.drop_join_interest();
    release(t);  // the join handle's reference
  }

  // The owner: runs queued polls until the task completed (a lost wake makes this spin forever).
  void drive(model_task* t) {
    bool completed = false;
    while (!completed) {
      if (pop()) {
        completed = run(t);
      } else {
        weft::platform::yield_thread();
      }
    }
  }
};

// Two threads: the owner polls the task while a waker publishes `ready` and wakes it twice (the
// second wake coalesces or comes after completion), then drops its waker. The join handle is
// dropped by the owner up front.
struct wake_vs_poll : rl::test_suite<wake_vs_poll, 2> {
  model_loop loop;
  model_task* task = new model_task;

  void thread(unsigned index) {
    if (index == 0) {
      loop.drop_join_handle(task);
      loop.drive(task);
    } else {
      loop.ready.store(1, std::memory_order_relaxed);
      loop.wake(task);
      loop.wake(task);
      loop.release(task);  // the waker clone, maybe the last reference
    }
  }
  void after() { RL_ASSERT(loop.deallocations.load(std::memory_order_relaxed) == 1); }
};

// wake_vs_poll with one wake, by value: the waker thread's clone is used up by it (its reference
// becomes the queue entry's when the task was idle, or is dropped when the wake coalesces with the
// initial entry or a running poll, or comes after completion), and nothing else drops it.
struct wake_by_value_vs_poll : rl::test_suite<wake_by_value_vs_poll, 2> {
  model_loop loop;
  model_task* task = new model_task;

  void thread(unsigned index) {
    if (index == 0) {
      loop.drop_join_handle(task);
      loop.drive(task);
    } else {
      loop.ready.store(1, std::memory_order_relaxed);
      loop.wake_by_value(task);  // the clone's reference, maybe the last
    }
  }
  void after() { RL_ASSERT(loop.deallocations.load(std::memory_order_relaxed) == 1); }
};

// Three threads: a waker, and a join handle that aborts the task and drops itself, against the
// owner's polls. Whichever wins, the task completes once and is freed once.
struct wake_vs_abort : rl::test_suite<wake_vs_abort, 3> {
  model_loop loop;
  model_task* task = new model_task;

  void thread(unsigned index) {
    if (index == 0) {
      loop.drive(task);
    } else if (index == 1) {
      loop.ready.store(1, std::memory_order_relaxed);
      loop.wake(task);
      loop.release(task);  // the waker clone outlives the task's completion, maybe its owner
    } else {
      loop.abort(task);
      loop.drop_join_handle(task);
    }
  }
  void after() { RL_ASSERT(loop.deallocations.load(std::memory_order_relaxed) == 1); }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "task_state", argc, argv,
      {
          {"wake_vs_poll", &run_test<wake_vs_poll>, {search::context_bound(3), search::random(100000)}},
          {"wake_vs_abort", &run_test<wake_vs_abort>, {search::context_bound(2), search::random(100000)}},
          {"wake_by_value_vs_poll", &run_test<wake_by_value_vs_poll>,
           {search::context_bound(3), search::random(100000)}},
      });
}
