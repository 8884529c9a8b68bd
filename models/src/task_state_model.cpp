// task_state_model.cpp — Relacy model of a task cell's state machine: the production harness
// (detail/task_harness.hpp: schedule_poll, schedule_poll_by_value, request_cancel, run, complete)
// over the production state word (detail/task_state.hpp), compiled against the model flavor of
// the seam. task_header runs every task through the same harness; here it drives a model cell
// whose "frame" every poll writes and the destructor touches, like a coroutine frame, and whose
// first poll wakes its own task (a yield), so the self-wake path — a re-queue that keeps
// `scheduled` without an atomic operation — is checked against the other threads' wakes and
// aborts.
//
// Invariants:
//   * no lost wake-up: a wake that happens while the task is idle, queued or running leads to a
//     poll that sees what the waker wrote before waking (the poll reads a relaxed `ready` flag,
//     so only the state word's release/acquire pairs make it visible; a lost wake leaves the
//     owner waiting forever: LIVELOCK);
//   * coalescing: at most one queue entry exists at a time (each owns a reference);
//   * no poll after completion, completion once (the production asserts, and after());
//   * a waker may outlive the task: its late wake is a no-op and its reference drop may be the
//     last one;
//   * exactly one deallocation, by whoever drops the last reference, after every other owner's
//     writes (a missing acquire/release on the count is a DATA RACE on the frame; a missing or
//     extra reference is a leak, a double free or an access to freed memory);
//   * the output (heap memory, so Relacy tracks it) is destroyed once, by the completer or the
//     join handle (join_handoff.hpp).
#include <memory>
#include <optional>
#include <utility>

#include <weft/detail/join_handoff.hpp>
#include <weft/detail/task_harness.hpp>
#include <weft/detail/task_state.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>
#include <weft/waker.hpp>

namespace {

using weft::detail::output_slot;
using weft::detail::poll_step;
using weft::detail::task_state;
namespace join_handoff = weft::detail::join_handoff;

struct model_cell;
using harness = weft::detail::task_harness<model_cell>;
using task_output = std::unique_ptr<int>;  // heap memory: Relacy sees who frees it

// The parts of a loop the task touches: its run queue (an inbox: any thread pushes under a lock,
// the owner pops), what the waker publishes, and the record of completions and deallocations.
struct model_loop {
  weft::sync::mutex lock;
  weft::sync::cell<int> queued{1};  // queue entries for the task (it starts queued)
  weft::sync::atomic<int> ready{0};  // what the waker publishes; the poll reads it relaxed
  weft::sync::atomic<int> completions{0};  // owner thread; read by it and in after()
  weft::sync::atomic<int> deallocations{0};  // read in after()

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
};

// A task cell as the harness sees it (the hooks task_harness.hpp lists), spawned with a join
// handle and queued for its first poll.
struct model_cell {
  struct polling_tag;
  using polling_slot = weft::platform::thread_slot<model_cell, polling_tag>;  // task_header's current task

  // `yields_first`: the first poll wakes its own task (a yield); else every poll just looks.
  explicit model_cell(model_loop& l, bool yields_first = true) : loop(l), yields(yields_first) {}

  model_loop& loop;
  const bool yields;
  task_state state{task_state::initial_spawned + task_state::ref_one};  // + the waker thread's clone
  weft::sync::cell<weft::waker> join_waker_slot;
  weft::sync::cell<output_slot<task_output>> output;
  weft::sync::cell<int> frame{0};  // owner thread only (also read after `complete`), and the destructor
  weft::sync::cell<bool> self_woken{false};  // owner thread only, as task_header's flag

  bool polled_here() const noexcept { return polling_slot::get() == this; }
  void note_self_wake() noexcept {
    self_woken.with_mut([](bool& w) { w = true; });
  }
  void submit() noexcept { loop.push(); }

  // The coroutine: its first poll yields (if `yields`); a later one finishes once it sees `ready`.
  poll_step poll_frame() noexcept {
    polling_slot::set(this);
    const bool first = frame.with_mut([](int& f) { return ++f == 1; });
    if (first && yields) harness::schedule_poll(*this);  // a wake from inside its own poll
    polling_slot::set(nullptr);  // the slots are process-wide: reset before the thread ends
    const bool yielded = self_woken.with_mut([](bool& w) { return std::exchange(w, false); });
    // relaxed: the queue's hand-off or the state word's acquire (begin_poll, transition_to_idle)
    // must be what orders this.
    if (!yielded && loop.ready.load(std::memory_order_relaxed) != 0) {
      output.with_mut([](output_slot<task_output>& slot) { slot.emplace(std::make_unique<int>(1)); });
      return poll_step::finished;
    }
    return yielded ? poll_step::yielded : poll_step::waiting;
  }
  void cancel_frame() noexcept {
    frame.with_mut([](int& f) { f = 0; });  // the frame is destroyed
    output.with_mut([](output_slot<task_output>& slot) { slot.emplace(std::make_unique<int>(0)); });
  }
  void leave_owner_list() noexcept {}  // the model's loop keeps no list; its reference is counted
  void drop_unread_output() noexcept {
    output.with_mut([](output_slot<task_output>& slot) { slot.reset(); });
  }
  void count_finished() noexcept {
    // After `complete`, the owner still reads the cell (production: its owner pointer, to count
    // the task finished); whoever frees the cell last must be ordered after that read.
    frame.with([](int) {});
    loop.completions.fetch_add(1, std::memory_order_relaxed);  // owner thread; after() reads it
  }
  void release(std::uint64_t count = 1) noexcept {
    if (state.ref_dec(count)) deallocate();
  }
  // The last reference is gone (whichever owner dropped it).
  void deallocate() noexcept {
    model_loop& l = loop;
    frame.with_mut([](int& f) { f = -1; });  // the destructor touches the frame
    delete this;
    l.deallocations.fetch_add(1, std::memory_order_relaxed);  // read in after()
  }
};

// The join handle goes (join_handle::release_cell): its interest, then its reference.
void drop_join_handle(model_cell* t) {
  join_handoff::drop_join_interest(t->state, t->join_waker_slot, t->output);
  t->release();
}

// The join handle, having seen `complete`, takes the output and goes: interest and reference in
// one operation (task_cell::release_join_handle(true)), maybe the last reference.
void take_and_drop_join_handle(model_cell* t) {
  std::optional<task_output> out;
  join_handoff::take_output(t->output, out);
  RL_ASSERT(out.has_value() && *out != nullptr);
  if (join_handoff::drop_join_interest_after_take(t->state)) t->deallocate();
}

// The owner: runs queued polls until the task completed (a lost wake makes this spin forever).
void drive(model_loop& loop, model_cell* t) {
  // relaxed: written by this thread only.
  while (loop.completions.load(std::memory_order_relaxed) == 0) {
    if (loop.pop()) {
      harness::run(*t);  // may free the cell
    } else {
      weft::platform::yield_thread();
    }
  }
}

// Every scenario ends with the task completed once and freed once.
void check_ended(model_loop& loop) {
  RL_ASSERT(loop.completions.load(std::memory_order_relaxed) == 1);
  RL_ASSERT(loop.deallocations.load(std::memory_order_relaxed) == 1);
}

// Two threads: the owner polls the task while a waker publishes `ready` and wakes it twice (the
// second wake coalesces or comes after completion), then drops its waker. The join handle is
// dropped by the owner up front. `YieldsFirst` false (wake_vs_first_poll): the task never yields,
// so the first wake finds the initial entry queued or its poll running and sets `notified`, which
// that poll's start or end consumes (after a yield the same happens to the re-queued entry).
template <bool YieldsFirst>
struct wake_vs_poll_of : rl::test_suite<wake_vs_poll_of<YieldsFirst>, 2> {
  model_loop loop;
  model_cell* task = new model_cell(loop, YieldsFirst);

  void thread(unsigned index) {
    if (index == 0) {
      drop_join_handle(task);
      drive(loop, task);
    } else {
      loop.ready.store(1, std::memory_order_relaxed);
      harness::schedule_poll(*task);
      harness::schedule_poll(*task);
      task->release();  // the waker clone, maybe the last reference
    }
  }
  void after() { check_ended(loop); }
};
using wake_vs_poll = wake_vs_poll_of<true>;
using wake_vs_first_poll = wake_vs_poll_of<false>;

// wake_vs_poll with one wake, by value: the waker thread's clone is used up by it (its reference
// becomes the queue entry's when the task was idle, or is dropped when the wake coalesces with the
// initial entry or a running poll, or comes after completion), and nothing else drops it.
struct wake_by_value_vs_poll : rl::test_suite<wake_by_value_vs_poll, 2> {
  model_loop loop;
  model_cell* task = new model_cell(loop);

  void thread(unsigned index) {
    if (index == 0) {
      drop_join_handle(task);
      drive(loop, task);
    } else {
      loop.ready.store(1, std::memory_order_relaxed);
      harness::schedule_poll_by_value(*task);  // the clone's reference, maybe the last
    }
  }
  void after() { check_ended(loop); }
};

// Three threads: a waker, and a join handle that aborts the task and drops itself, against the
// owner's polls. Whichever wins, the task completes once and is freed once.
struct wake_vs_abort : rl::test_suite<wake_vs_abort, 3> {
  model_loop loop;
  model_cell* task = new model_cell(loop);

  void thread(unsigned index) {
    if (index == 0) {
      drive(loop, task);
    } else if (index == 1) {
      loop.ready.store(1, std::memory_order_relaxed);
      harness::schedule_poll(*task);
      task->release();  // the waker clone outlives the task's completion, maybe its owner
    } else {
      harness::request_cancel(*task);
      drop_join_handle(task);
    }
  }
  void after() { check_ended(loop); }
};

// Two threads: the waker thread wakes the task by value, then joins it: once it sees `complete`
// it takes the output and drops the handle's interest and reference together, racing the owner's
// completion and release of its own references. Whichever reference goes last frees the cell.
struct join_take_vs_complete : rl::test_suite<join_take_vs_complete, 2> {
  model_loop loop;
  model_cell* task = new model_cell(loop);

  void thread(unsigned index) {
    if (index == 0) {
      drive(loop, task);
    } else {
      loop.ready.store(1, std::memory_order_relaxed);
      harness::schedule_poll_by_value(*task);  // the clone's reference
      // acquire: pairs with transition_to_complete's release, as poll_join's load does.
      while (!(task->state.load(std::memory_order_acquire) & task_state::complete)) {
        weft::platform::yield_thread();
      }
      take_and_drop_join_handle(task);
    }
  }
  void after() { check_ended(loop); }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "task_state", argc, argv,
      {
          {"wake_vs_poll", &run_test<wake_vs_poll>, {search::context_bound(3), search::random(100000)}},
          {"wake_vs_first_poll", &run_test<wake_vs_first_poll>, {search::context_bound(3), search::random(100000)}},
          {"wake_vs_abort", &run_test<wake_vs_abort>, {search::context_bound(2), search::random(100000)}},
          {"wake_by_value_vs_poll", &run_test<wake_by_value_vs_poll>,
           {search::context_bound(3), search::random(100000)}},
          {"join_take_vs_complete", &run_test<join_take_vs_complete>,
           {search::context_bound(3), search::random(100000)}},
      });
}
