// remote_wake_order — tasks of a busy event loop are woken from other threads while the loop's
// macrotask queue holds several macrotasks.
//
// The loop's thread (the scenario's main fiber) block_on()s a task that spawns `tasks` tasks and
// joins them. Each task awaits a generation leaf `rounds` times (sometimes sleeping in between).
// Meanwhile `tickers` macrotasks re-queue themselves, now and then queue a burst of up to `burst`
// one-shot macrotasks or arm a short loop timer, and now and then pause for a virtual millisecond
// (the loop then idles in its driver until a wake or the timer), so the macrotask queue usually
// holds two or more. `wakers` threads (sim.start_thread) each own every `wakers`-th task: once the
// task waits for generation r, the thread releases r and wakes the task's waker, sometimes after
// queueing a remote macrotask of its own.
//
// Oracles: wake_order.hpp (a task woken from another thread is polled at the next checkpoint:
// at most one counted macrotask starts between the wake's return and the task's resumption;
// every macrotask the scenario queues — tickers, bursts, timer callbacks, remote ones — is
// counted); outcomes.hpp (every task ends `ok` once).
#pragma once

#include <chrono>
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
#include <weft/sim/oracles/outcomes.hpp>
#include <weft/sim/oracles/wake_order.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

namespace weft::sim::scenarios {

// One task's generation counter: the task waits for `want`, a waker thread releases it.
struct generation_box {
  struct guarded {
    std::uint64_t released = 0;  // the last generation a waker released
    std::uint64_t want = 0;      // the generation the task waits for (0: not waiting)
    bool gone = false;           // the task's frame is gone: nobody will wait again
    waker stored;
  };
  sync::mutex lock;
  sync::condvar changed;  // `want` or `gone` changed: the task's waker thread looks again
  sync::cell<guarded> state;
};

class generation_leaf {
 public:
  generation_leaf(generation_box& box, std::uint64_t want) noexcept : box_(box), want_(want) {}

  bool poll_ready(const waker& w) {
    sync::lock_guard<sync::mutex> hold(box_.lock);
    const bool ready = box_.state.with_mut([&](generation_box::guarded& g) {
      if (g.released >= want_) {
        g.want = 0;
        return true;
      }
      g.want = want_;
      if (!g.stored.will_wake(w)) g.stored = w;
      return false;
    });
    if (!ready) box_.changed.notify_all();
    return ready;
  }
  void await_resume() const noexcept {}

 private:
  generation_box& box_;
  std::uint64_t want_;
};

struct wake_order_world {
  wake_order_world(context& s, event_loop& l) : sim(s), loop(l), order(s), outcomes(s) {}
  context& sim;
  event_loop& loop;
  oracles::wake_order_ledger order;
  oracles::outcome_ledger outcomes;
  std::uint64_t burst_max = 0;
  bool stop = false;  // owner thread: the tickers stop re-queueing
  std::vector<std::unique_ptr<generation_box>> boxes;
};

// A ticker's macrotask: counts itself, maybe queues a burst or a timer, then re-queues itself (or,
// now and then, comes back from a timer a virtual millisecond later).
inline void ticker_step(wake_order_world* w) {
  w->order.macrotask_started();
  if (w->stop) return;
  if (w->burst_max > 0 && w->sim.chance(1, 4)) {
    const std::uint64_t n = w->sim.pick(1, w->burst_max);
    for (std::uint64_t i = 0; i < n; ++i) w->loop.queue_macrotask([w] { w->order.macrotask_started(); });
  }
  if (w->sim.chance(1, 8)) {
    (void)w->loop.set_timeout(std::chrono::milliseconds(w->sim.pick(0, 2)), [w] { w->order.macrotask_started(); });
  }
  if (w->sim.chance(1, 16)) {
    (void)w->loop.set_timeout(std::chrono::milliseconds(1), [w] { ticker_step(w); });
  } else {
    w->loop.queue_macrotask([w] { ticker_step(w); });
  }
}

// Marks the box gone when the task's frame is destroyed, however it ends, so no waker waits for
// a task that will never wait again.
struct box_gone_on_exit {
  generation_box& box;
  ~box_gone_on_exit() {
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with_mut([](generation_box::guarded& g) { g.gone = true; });
    box.changed.notify_all();
  }
};

inline task<std::uint64_t> generation_task(wake_order_world* w, std::uint64_t id, std::uint64_t rounds, bool sleeps) {
  box_gone_on_exit gone{*w->boxes[id]};
  for (std::uint64_t gen = 1; gen <= rounds; ++gen) {
    try {
      co_await generation_leaf(*w->boxes[id], gen);
    } catch (const injected_fault&) {
      // Thrown at the co_await after the leaf reported ready: the wake was consumed all the same.
    }
    w->order.resumed(id, gen);
    if (sleeps && gen % 2 == 0) {
      try {
        co_await sleep(std::chrono::microseconds(500));
      } catch (const injected_fault&) {
        // The sleep is only there to vary the schedule.
      }
    }
  }
  co_return id;
}

// Waits until task `id` waits for generation `gen` (or is gone), then releases it and wakes it.
// Returns false when the task is gone. (A condvar, not a yield loop: the loop's thread may be
// asleep in its driver until a timer, and a spinning thread would keep virtual time from moving.)
inline bool release_generation(wake_order_world& w, std::uint64_t id, std::uint64_t gen) {
  generation_box& box = *w.boxes[id];
  waker to_wake;
  {
    sync::unique_lock<sync::mutex> hold(box.lock);
    for (;;) {
      bool gone = false;
      bool released = false;
      box.state.with_mut([&](generation_box::guarded& g) {
        gone = g.gone;
        if (gone || g.want != gen) return;
        g.released = gen;
        to_wake = g.stored;
        released = true;
      });
      if (gone) return false;
      if (released) break;
      box.changed.wait(hold);
    }
  }
  std::move(to_wake).wake();
  w.order.woken(id, gen);  // right after wake() returned
  return true;
}

inline void remote_wake_order(context& sim) {
  const auto tasks = static_cast<std::uint64_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(2, 6))));
  const auto wakers = static_cast<std::uint64_t>(sim.param("wakers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto rounds = static_cast<std::uint64_t>(sim.param("rounds", static_cast<std::int64_t>(sim.pick(2, 6))));
  const auto tickers = static_cast<std::uint64_t>(sim.param("tickers", static_cast<std::int64_t>(sim.pick(2, 3))));
  const auto burst = static_cast<std::uint64_t>(sim.param("burst", static_cast<std::int64_t>(sim.pick(0, 4))));
  std::vector<bool> sleeps(tasks);
  for (std::uint64_t j = 0; j < tasks; ++j) sleeps[j] = sim.chance(1, 3);

  event_loop loop;
  wake_order_world world(sim, loop);
  world.burst_max = burst;
  world.outcomes.allow_panics(sim.fault_enabled(platform::fault::task_exception));
  for (std::uint64_t j = 0; j < tasks; ++j) world.boxes.push_back(std::make_unique<generation_box>());
  thread_handle handle = loop.handle();

  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  for (std::uint64_t k = 0; k < wakers; ++k) {
    threads.push_back(sim.start_thread([&, k] {
      sim.name_thread("waker-" + std::to_string(k));
      std::vector<bool> gone(tasks);
      for (std::uint64_t gen = 1; gen <= rounds; ++gen) {
        for (std::uint64_t j = k; j < tasks; j += wakers) {
          if (gone[j]) continue;
          if (sim.chance(1, 4)) {
            // A remote macrotask: counted too, and it lands in the inbox beside the wakes.
            (void)handle.queue_macrotask([w = &world] { w->order.macrotask_started(); });
          }
          if (sim.chance(1, 2)) platform::yield_thread();
          gone[j] = !release_generation(world, j, gen);
        }
      }
    }));
  }

  const std::uint64_t completed = loop.block_on([&]() -> task<std::uint64_t> {
    std::vector<join_handle<std::uint64_t>> handles;
    for (std::uint64_t j = 0; j < tasks; ++j) {
      world.outcomes.admitted(j, "ok");
      handles.push_back(loop.spawn(generation_task(&world, j, rounds, sleeps[j])));
    }
    for (std::uint64_t t = 0; t < tickers; ++t) loop.queue_macrotask([w = &world] { ticker_step(w); });
    std::uint64_t done = 0;
    for (std::uint64_t j = 0; j < tasks; ++j) {
      auto result = co_await settle_join(handles[j]);
      if (!result) {
        world.outcomes.terminal(j, to_string(result.error().get_kind()));
      } else if (*result != j) {
        world.outcomes.terminal(j, "wrong value " + std::to_string(*result));
      } else {
        world.outcomes.terminal(j, "ok");
        ++done;
      }
    }
    world.stop = true;
    co_return done;
  }());

  for (auto& t : threads) t.join();
  world.outcomes.check();
  sim.note("remote_wake_order: " + std::to_string(completed) + "/" + std::to_string(tasks) + " tasks, " +
           std::to_string(world.order.checked()) + " of " + std::to_string(world.order.resumes()) +
           " resumptions checked, " + std::to_string(world.order.macrotasks()) + " macrotasks");
}

// The knobs remote_wake_order reads and their accepted ranges.
inline std::vector<knob> remote_wake_order_knobs() {
  return {
      {"tasks", 1, 1'000, "tasks awaiting remote wakes"},
      {"wakers", 1, 64, "waking threads (each owns every wakers-th task)"},
      {"rounds", 1, 1'000, "wakes per task"},
      {"tickers", 1, 64, "self-re-queueing macrotasks on the loop"},
      {"burst", 0, 64, "largest burst of one-shot macrotasks a ticker queues (0: none)"},
  };
}

}  // namespace weft::sim::scenarios
