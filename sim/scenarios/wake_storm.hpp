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

template <wake_storm_variant Variant>
void wake_storm(context& sim) {
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(4, 12))));
  const auto wakers = static_cast<std::size_t>(sim.param("wakers", static_cast<std::int64_t>(sim.pick(1, 3))));
  std::vector<std::unique_ptr<wake_box>> boxes;
  for (std::size_t i = 0; i < tasks; ++i) boxes.push_back(std::make_unique<wake_box>());
  std::vector<bool> duplicate(tasks);
  for (std::size_t i = 0; i < tasks; ++i) duplicate[i] = sim.chance(1, 3);
  // Handles first polled by the root with a throwaway waker, then moved to a joiner task; of
  // those, the ones whose waker waits for the joiner's first poll (the others may finish before
  // the root's poll, which then leaves the output in the handle it moves). Not in the lost_wake
  // variant, whose seeds stay those its tests expect.
  std::vector<bool> hand_over(tasks);
  std::vector<bool> gated(tasks);
  if constexpr (Variant == wake_storm_variant::correct) {
    for (std::size_t i = 0; i < tasks; ++i) hand_over[i] = sim.chance(1, 2);
    for (std::size_t i = 0; i < tasks; ++i) gated[i] = hand_over[i] && sim.chance(1, 2);
  }
  // Opened by a joiner just before it first polls its handle, and all at once when the root
  // ends: the waker of a handed-over task waits for it, so the task is unfinished at that poll.
  std::vector<std::unique_ptr<hand_over_gate>> gates;
  for (std::size_t i = 0; i < tasks; ++i) gates.push_back(std::make_unique<hand_over_gate>());

  oracles::outcome_ledger outcomes(sim);
  outcomes.allow_panics(sim.fault_enabled(platform::fault::task_exception));  // any await may throw
  event_loop loop;

  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  for (std::size_t w = 0; w < wakers; ++w) {
    threads.push_back(sim.start_thread([&, w] {
      sim.name_thread("waker-" + std::to_string(w));
      for (std::size_t j = w; j < tasks; j += wakers) {
        platform::yield_thread();
        if (gated[j]) gates[j]->wait();
        set_and_wake(*boxes[j], duplicate[j]);
        spurious_wake(*boxes[(j + 1) % tasks]);
      }
    }));
  }

  const std::size_t completed = loop.block_on([&]() -> task<std::size_t> {
    struct open_on_end {
      std::vector<std::unique_ptr<hand_over_gate>>* gates;
      ~open_on_end() {
        for (auto& g : *gates) g->open();
      }
    } opener{&gates};
    std::vector<join_handle<std::size_t>> handles;
    for (std::size_t j = 0; j < tasks; ++j) {
      outcomes.admitted(j, "ok");
      handles.push_back(loop.spawn([&boxes, j]() -> task<std::size_t> {
        co_await flag_leaf<Variant>(*boxes[j]);
        co_return j;
      }));
    }
    std::size_t done = 0;
    for (std::size_t j = 0; j < tasks; ++j) {
      expected<std::size_t, join_error> result = unexpected(join_error(join_error::cancelled));
      if (hand_over[j]) {
        // A poll whose waker is then given up, as by a select that lost interest: the output
        // (if ready) now sits in the handle, and the joiner's later poll must replace the waker.
        (void)handles[j].poll_ready(waker{});
        auto joiner = loop.spawn([h = std::move(handles[j]), gate = gates[j].get()]() mutable
                                 -> task<expected<std::size_t, join_error>> {
          gate->open();
          co_return co_await settle_join(h);
        });
        oracles::check_moved_from(sim, handles[j], "the handle of task " + std::to_string(j));
        auto handed = co_await settle_join(joiner);
        result = handed ? std::move(*handed) : unexpected(handed.error());  // the joiner's own failure counts
      } else {
        result = co_await settle_join(handles[j]);
      }
      if (!result) {
        outcomes.terminal(j, to_string(result.error().get_kind()));
      } else if (*result != j) {
        outcomes.terminal(j, "wrong value " + std::to_string(*result));
      } else {
        outcomes.terminal(j, "ok");
        ++done;
      }
    }
    co_return done;
  }());

  for (auto& t : threads) t.join();
  outcomes.check();
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
