// wake_storm — several simulated threads wake tasks of one event loop, with duplicate and
// spurious wakes mixed in.
//
// The loop's thread (the scenario's main fiber) block_on()s a task that spawns `tasks` tasks,
// each awaiting a flag_leaf, and joins them all. `wakers` other threads set the flags (each
// followed, sometimes, by a duplicate wake) and also wake some *other* task spuriously. A wake
// only schedules a poll; the leaf decides readiness, so duplicates and spurious wakes must be
// harmless. Oracle (outcomes.hpp): every task reaches exactly one terminal outcome, `ok` (or
// `panicked` when the run injects task exceptions, e.g. under --swarm). A lost
// wake leaves block_on parked with nothing pending: the simulator reports a deadlock.
//
// Hand-overs: the root polls half the join handles once with a throwaway waker (as a select
// that then lost interest would) and moves each to a joiner task that awaits it. Oracle
// (handle_moves.hpp): the moved-from handle is empty. For half of those, the task's waker
// thread waits until the joiner is about to poll, so the task is unfinished at that poll and
// its completion must wake the joiner, not the throwaway waker (else: a deadlock).
//
// Variant `lost_wake` (test-only, proves the scenario can fail): the leaf checks its flag outside
// the lock and then publishes its waker without re-checking, so a set-and-wake that lands between
// the two is lost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/oracles/handle_moves.hpp>
#include <weft/sim/oracles/outcomes.hpp>
#include <weft/task.hpp>
#include <weft/waker.hpp>

namespace weft::sim::scenarios {

enum class wake_storm_variant { correct, lost_wake };

struct wake_box {
  struct guarded {
    bool set = false;
    waker stored;
  };
  sync::mutex lock;
  sync::cell<guarded> state;
  sync::atomic<bool> flag{false};  // read without the lock only by the lost_wake variant
};

template <wake_storm_variant Variant>
class flag_leaf {
 public:
  explicit flag_leaf(wake_box& box) noexcept : box_(box) {}

  bool poll_ready(const waker& w) {
    if constexpr (Variant == wake_storm_variant::correct) {
      sync::lock_guard<sync::mutex> hold(box_.lock);
      return box_.state.with_mut([&](wake_box::guarded& g) {
        if (g.set) return true;
        if (!g.stored.will_wake(w)) g.stored = w;
        return false;
      });
    } else {
      // BUG (test-only): check and publish are not one step under the lock.
      // acquire: pairs with the release store in set_and_wake.
      if (box_.flag.load(std::memory_order_acquire)) return true;
      sync::lock_guard<sync::mutex> hold(box_.lock);
      box_.state.with_mut([&](wake_box::guarded& g) {
        if (!g.stored.will_wake(w)) g.stored = w;
      });
      return false;
    }
  }
  void await_resume() const noexcept {}

 private:
  wake_box& box_;
};

// Sets the flag and takes the waker under the lock; wakes outside it (possibly twice).
inline void set_and_wake(wake_box& box, bool duplicate) {
  // release: pairs with the acquire load of the lost_wake variant's leaf.
  box.flag.store(true, std::memory_order_release);
  waker w;
  {
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with_mut([&](wake_box::guarded& g) {
      g.set = true;
      w = g.stored;
    });
  }
  if (duplicate) w.wake();  // by reference: w is used again just below
  std::move(w).wake();       // by value: the clone's reference goes with the wake
}

// A one-way gate a waker thread blocks on (a condvar, not a yield loop: under PCT a spinning
// waker of higher priority would starve the loop's thread for good).
struct hand_over_gate {
  sync::mutex lock;
  sync::cell<bool> opened{false};
  sync::condvar changed;

  void open() {
    sync::lock_guard<sync::mutex> hold(lock);
    opened.with_mut([](bool& o) { o = true; });
    changed.notify_all();
  }
  void wait() {
    sync::unique_lock<sync::mutex> hold(lock);
    while (!opened.with([](const bool& o) { return o; })) changed.wait(hold);
  }
};

// Wakes whatever waker the box holds, without setting anything.
inline void spurious_wake(wake_box& box) {
  waker w;
  {
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with([&](const wake_box::guarded& g) { w = g.stored; });
  }
  std::move(w).wake();
}

// What one wake_storm run picks up front, in this order: a box per task, which tasks get a
// duplicate wake, which are handed over and which of those gated.
struct wake_storm_plan {
  std::vector<std::unique_ptr<wake_box>> boxes;
  std::vector<bool> duplicate;
  // Handles first polled by the root with a throwaway waker, then moved to a joiner task; of
  // those, the ones whose waker waits for the joiner's first poll (the others may finish before
  // the root's poll, which then leaves the output in the handle it moves). Not in the lost_wake
  // variant, whose seeds stay those its tests expect.
  std::vector<bool> hand_over;
  std::vector<bool> gated;
  // Opened by a joiner just before it first polls its handle, and all at once when the root
  // ends: the waker of a handed-over task waits for it, so the task is unfinished at that poll.
  std::vector<std::unique_ptr<hand_over_gate>> gates;
};

template <wake_storm_variant Variant>
wake_storm_plan plan_wake_storm(context& sim, std::size_t tasks) {
  wake_storm_plan plan;
  for (std::size_t i = 0; i < tasks; ++i) plan.boxes.push_back(std::make_unique<wake_box>());
  plan.duplicate.resize(tasks);
  for (std::size_t i = 0; i < tasks; ++i) plan.duplicate[i] = sim.chance(1, 3);
  plan.hand_over.resize(tasks);
  plan.gated.resize(tasks);
  if constexpr (Variant == wake_storm_variant::correct) {
    for (std::size_t i = 0; i < tasks; ++i) plan.hand_over[i] = sim.chance(1, 2);
    for (std::size_t i = 0; i < tasks; ++i) plan.gated[i] = plan.hand_over[i] && sim.chance(1, 2);
  }
  for (std::size_t i = 0; i < tasks; ++i) plan.gates.push_back(std::make_unique<hand_over_gate>());
  return plan;
}

// One run of wake_storm: its plan, the ledger, the loop and the steps.
template <wake_storm_variant Variant>
class wake_storm_run {
 public:
  // The plan is picked before the loop exists, as the seed's stream expects.
  wake_storm_run(context& sim, std::size_t tasks)
      : sim_(sim), tasks_(tasks), plan_(plan_wake_storm<Variant>(sim, tasks)), outcomes_(sim) {
    outcomes_.allow_panics(sim.fault_enabled(platform::fault::task_exception));  // any await may throw
  }

  // Step: `wakers` threads, waker w setting the flags of tasks w, w + wakers, ... (each followed
  // by a spurious wake of the next task).
  void start_wakers(std::size_t wakers, std::vector<platform::thread>& threads) {
    for (std::size_t w = 0; w < wakers; ++w) {
      threads.push_back(sim_.start_thread([this, w, wakers] {
        sim_.name_thread("waker-" + std::to_string(w));
        for (std::size_t j = w; j < tasks_; j += wakers) {
          platform::yield_thread();
          if (plan_.gated[j]) plan_.gates[j]->wait();
          set_and_wake(*plan_.boxes[j], plan_.duplicate[j]);
          spurious_wake(*plan_.boxes[(j + 1) % tasks_]);
        }
      }));
    }
  }

  // Step: the loop's thread spawns the tasks and joins them all; returns how many completed.
  std::size_t join_all() { return loop_.block_on(spawn_and_join()); }

  void check() { outcomes_.check(); }

 private:
  task<std::size_t> spawn_and_join() {
    struct open_on_end {
      std::vector<std::unique_ptr<hand_over_gate>>* gates;
      ~open_on_end() {
        for (auto& g : *gates) g->open();
      }
    } opener{&plan_.gates};
    std::vector<join_handle<std::size_t>> handles;
    for (std::size_t j = 0; j < tasks_; ++j) {
      outcomes_.admitted(j, "ok");
      handles.push_back(loop_.spawn([&boxes = plan_.boxes, j]() -> task<std::size_t> {
        co_await flag_leaf<Variant>(*boxes[j]);
        co_return j;
      }));
    }
    std::size_t done = 0;
    for (std::size_t j = 0; j < tasks_; ++j) {
      expected<std::size_t, join_error> result = unexpected(join_error(join_error::cancelled));
      if (plan_.hand_over[j]) {
        result = co_await join_handed_over(j, handles[j]);
      } else {
        result = co_await settle_join(handles[j]);
      }
      if (record(j, result)) ++done;
    }
    co_return done;
  }

  // A poll whose waker is then given up, as by a select that lost interest: the output (if ready)
  // now sits in the handle, and the joiner's later poll must replace the waker. The handle then
  // moves to a joiner task, whose answer (or own failure) is the result.
  task<expected<std::size_t, join_error>> join_handed_over(std::size_t j, join_handle<std::size_t>& handle) {
    (void)handle.poll_ready(waker{});
    auto joiner = loop_.spawn([h = std::move(handle), gate = plan_.gates[j].get()]() mutable
                              -> task<expected<std::size_t, join_error>> {
      gate->open();
      co_return co_await settle_join(h);
    });
    oracles::check_moved_from(sim_, handle, "the handle of task " + std::to_string(j));
    auto handed = co_await settle_join(joiner);
    co_return handed ? std::move(*handed) : unexpected(handed.error());  // the joiner's own failure counts
  }

  // Records task j's terminal outcome; true when it completed with its own value.
  bool record(std::size_t j, const expected<std::size_t, join_error>& result) {
    if (!result) {
      outcomes_.terminal(j, to_string(result.error().get_kind()));
    } else if (result.value() != j) {
      outcomes_.terminal(j, "wrong value " + std::to_string(result.value()));
    } else {
      outcomes_.terminal(j, "ok");
      return true;
    }
    return false;
  }

  context& sim_;
  std::size_t tasks_;
  wake_storm_plan plan_;
  oracles::outcome_ledger outcomes_;
  event_loop loop_;
};

template <wake_storm_variant Variant>
void wake_storm(context& sim) {
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(4, 12))));
  const auto wakers = static_cast<std::size_t>(sim.param("wakers", static_cast<std::int64_t>(sim.pick(1, 3))));
  wake_storm_run<Variant> run(sim, tasks);
  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  run.start_wakers(wakers, threads);
  const std::size_t completed = run.join_all();
  for (auto& t : threads) t.join();
  run.check();
  sim.note("wake_storm: " + std::to_string(completed) + "/" + std::to_string(tasks) + " tasks completed");
}

// The knobs wake_storm reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> wake_storm_knobs() {
  return {
      {"tasks", 1, 10'000, "awaiting tasks"},
      {"wakers", 1, 64, "waking threads"},
  };
}

}  // namespace weft::sim::scenarios
