// join_handoff_model.cpp — Relacy model of the join-result hand-off (detail/join_handoff.hpp: the
// joiner's poll_join / drop_join_interest and the completer's complete, over the production
// task_state word), compiled against the model flavor of the seam.
//
// Invariants:
//   * the output is published before the joiner reads it: the output slot is a sync::cell, so a
//     read not ordered after the completer's write is a DATA RACE;
//   * a joiner that registered a waker and found the task unfinished is woken: otherwise it
//     waits forever (Relacy reports a livelock/deadlock of the spinning joiner);
//   * the waker slot is written only by its owner of the moment (DATA RACE otherwise);
//   * exactly one party destroys the output: the output owns heap memory (Relacy tracks every
//     allocation in a model), so nobody destroying it is a MEMORY LEAK, both destroying it a
//     DATA RACE on the output cell or a DOUBLE FREE. The slot is the production output_slot,
//     which has no engaged flag: only the protocol keeps the count at one.
#include <memory>
#include <optional>

#include <weft/detail/join_handoff.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>
#include <weft/waker.hpp>

namespace {

using weft::waker;
using weft::detail::task_state;
namespace join_handoff = weft::detail::join_handoff;

// The output: owns heap memory, so Relacy sees who frees it.
using output = std::unique_ptr<int>;

// A waker that records wakes. It is owned by the test (never freed through the vtable), so the
// clone/drop count only has to balance.
struct model_waker {
  weft::sync::atomic<int> wakes{0};
  weft::sync::atomic<int> refs{0};

  static weft::raw_waker clone(void* data) noexcept {
    // relaxed: a reference count (the caller holds one).
    static_cast<model_waker*>(data)->refs.fetch_add(1, std::memory_order_relaxed);
    return weft::raw_waker{&vtable, data};
  }
  static void wake_by_ref(void* data) noexcept {
    // release: a wake happens-before the woken party's next poll (a production task wake gives
    // this through the task state word and the owner's inbox).
    static_cast<model_waker*>(data)->wakes.fetch_add(1, std::memory_order_release);
  }
  static void drop(void* data) noexcept {
    static_cast<model_waker*>(data)->refs.fetch_sub(1, std::memory_order_relaxed);
  }
  static constexpr weft::waker_vtable vtable{&clone, &wake_by_ref, &drop, nullptr};

  waker make() noexcept { return waker(clone(this)); }
  bool woken() const { return wakes.load(std::memory_order_acquire) != 0; }  // pairs with wake_by_ref
};

// The parts of a task cell the hand-off touches. The task is being polled on its owner thread
// (`scheduled`) and has a join handle.
struct cell_parts {
  task_state state{task_state::scheduled | task_state::join_interest | 2 * task_state::ref_one};
  weft::sync::cell<waker> waker_slot;
  weft::sync::cell<weft::detail::output_slot<output>> output_slot;

  // The owner thread finishing the task: store the output, then complete (task_header::complete).
  void finish(int value) {
    output_slot.with_mut([&](weft::detail::output_slot<output>& slot) { slot.emplace(std::make_unique<int>(value)); });
    join_handoff::complete(state, waker_slot, false, [this]() noexcept {
      output_slot.with_mut([](weft::detail::output_slot<output>& slot) { slot.reset(); });
    });
  }
  bool poll(model_waker& w, std::optional<output>& out) {
    const waker handle = w.make();
    return join_handoff::poll_join(state, waker_slot, output_slot, handle, out);
  }
  // The join handle goes (join_handle::release_cell): `taken` when a poll handed it the output.
  void drop(bool taken) {
    if (taken) {
      // The handle's reference goes with its interest; the completer's stays (the owned-task
      // list's, in production): not the last.
      RL_ASSERT(!join_handoff::drop_join_interest_after_take(state));
    } else {
      join_handoff::drop_join_interest(state, waker_slot, output_slot);
    }
  }
};

// Two threads: the joiner awaits the task (poll, and on Pending wait for its waker and poll
// again) while the owner completes it.
struct join_vs_complete : rl::test_suite<join_vs_complete, 2> {
  // The wakers are declared first so they outlive the cell, whose waker slot drops its clone.
  model_waker joiner;
  cell_parts task;

  void thread(unsigned index) {
    if (index == 0) {
      task.finish(42);
    } else {
      std::optional<output> out;
      if (!task.poll(joiner, out)) {
        while (!joiner.woken()) weft::platform::yield_thread();
        RL_ASSERT(task.poll(joiner, out));
      }
      RL_ASSERT(out.has_value());
      RL_ASSERT(**out == 42);
      task.drop(true);
    }
  }
};

// Two threads: the joiner polls with one waker, then with a different one (the slot is taken
// back and re-published: unset_join_waker / set_join_waker), racing completion.
struct rejoin_vs_complete : rl::test_suite<rejoin_vs_complete, 2> {
  // The wakers are declared first so they outlive the cell, whose waker slot drops its clone.
  model_waker first;
  model_waker second;
  cell_parts task;

  void thread(unsigned index) {
    if (index == 0) {
      task.finish(7);
    } else {
      std::optional<output> out;
      if (!task.poll(first, out) && !task.poll(second, out)) {
        while (!second.woken()) weft::platform::yield_thread();
        RL_ASSERT(task.poll(second, out));
      }
      RL_ASSERT(out.has_value());
      RL_ASSERT(**out == 7);
      task.drop(true);
    }
  }
};

// Two threads: the join handle is dropped (maybe after one poll) while the owner completes.
// Exactly one of them destroys the output.
struct drop_vs_complete : rl::test_suite<drop_vs_complete, 2> {
  // The wakers are declared first so they outlive the cell, whose waker slot drops its clone.
  model_waker joiner;
  cell_parts task;

  void thread(unsigned index) {
    if (index == 0) {
      task.finish(1);
    } else {
      std::optional<output> out;
      const bool taken = task.poll(joiner, out);  // may take the output already
      task.drop(taken);
    }
  }

  void after() {
    // Both parties are done. Nobody may still hold the output: the slot has no flag to ask, so a
    // party that forgot to destroy it shows as Relacy's MEMORY LEAK of the output's int, and two
    // that both destroyed it as a DOUBLE FREE (or a DATA RACE on the slot).
    // At most the slot's clone is left: it is freed with the cell when the completer saw it.
    RL_ASSERT(joiner.refs.load(std::memory_order_relaxed) <= 1);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "join_handoff", argc, argv,
      {
          {"join_vs_complete", &run_test<join_vs_complete>, {search::context_bound(3), search::random(100000)}},
          {"rejoin_vs_complete", &run_test<rejoin_vs_complete>, {search::context_bound(3), search::random(100000)}},
          {"drop_vs_complete", &run_test<drop_vs_complete>, {search::context_bound(3), search::random(100000)}},
      });
}
