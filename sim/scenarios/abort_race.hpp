// abort_race — tasks of an event loop are aborted through their join handles, from the loop's
// own thread and from other threads, racing their own completion.
//
// Every task passes `steps` gates (leaves its controller releases, each release a wake) and
// returns a value. Each task has one controller, the loop's thread or one of `threads` other
// threads, which owns its join handle and plays one script:
//   * race: release some of the gates, abort, release the rest (so a body that did not stop
//     would run on; from another thread one at a time, so it would take a poll per gate), then
//     join; now and then the handle is dropped in an abort_on_drop instead;
//   * after: release every gate, wait until the handle reports finished, abort, then join;
//   * never: release every gate and join.
// The loop's thread drives the loop (run_until) until its own scripts are done and every other
// controller said so through a macrotask.
//
// Oracles: aborts.hpp (frames destroyed on the loop's thread only; after abort() returned, no poll
// resumes the body when the owner aborted, at most the one running when another thread did);
// outcomes.hpp (each joined task one terminal outcome: `ok` when its completion was seen before the
// abort or its body reached its end — "a task that completes in the same poll during which it was
// aborted keeps its result" — and `cancelled` otherwise).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/oracles/aborts.hpp>
#include <weft/sim/oracles/outcomes.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

namespace weft::sim::scenarios {

// How a controller treats its task.
enum class abort_script : std::uint64_t { race, after, never };
inline constexpr std::uint64_t abort_script_count = 3;

struct gate_box {
  struct guarded {
    std::uint64_t released = 0;  // gates released so far
    bool gone = false;           // the task's frame is gone
    waker stored;
  };
  sync::mutex lock;
  sync::condvar changed;  // `gone` was set
  sync::cell<guarded> state;
};

struct abort_world {
  abort_world(context& s, std::uint64_t owner) : sim(s), aborts(s, owner), outcomes(s) {}
  context& sim;
  oracles::abort_ledger aborts;
  oracles::outcome_ledger outcomes;
  std::vector<std::unique_ptr<gate_box>> boxes;
};

// Ready once the controller released gate `want`. Reports a resumption to the abort ledger only
// when it had suspended the task (so the readiness was seen by a later poll).
class gate_leaf {
 public:
  gate_leaf(abort_world& w, std::uint64_t id, std::uint64_t want) noexcept : world_(w), id_(id), want_(want) {}

  bool poll_ready(const waker& w) {
    gate_box& box = *world_.boxes[id_];
    sync::lock_guard<sync::mutex> hold(box.lock);
    const bool ready = box.state.with_mut([&](gate_box::guarded& g) {
      if (g.released >= want_) return true;
      if (!g.stored.will_wake(w)) g.stored = w;
      return false;
    });
    if (ready && suspended_) world_.aborts.resumed_by_poll(id_);
    if (!ready) suspended_ = true;
    return ready;
  }
  void await_resume() const noexcept {}

 private:
  abort_world& world_;
  std::uint64_t id_;
  std::uint64_t want_;
  bool suspended_ = false;
};

// Lives in the task's frame: reports the thread that destroys it, and wakes a controller waiting
// for the frame to be gone.
struct frame_guard {
  abort_world& world;
  std::uint64_t id;
  ~frame_guard() {
    world.aborts.frame_destroyed(id, platform::current_thread_id());
    gate_box& box = *world.boxes[id];
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with_mut([](gate_box::guarded& g) { g.gone = true; });
    box.changed.notify_all();
  }
};

inline std::uint64_t gated_value(std::uint64_t id) { return id * 7 + 1; }

inline task<std::uint64_t> gated_task(abort_world* w, std::uint64_t id, std::uint64_t steps) {
  w->aborts.body_started(id);
  frame_guard guard{*w, id};
  for (std::uint64_t gate = 1; gate <= steps; ++gate) {
    try {
      co_await gate_leaf(*w, id, gate);
    } catch (const injected_fault&) {
      // Thrown at the co_await after the gate reported ready: the gate was passed all the same.
    }
  }
  w->aborts.body_finished(id);
  co_return gated_value(id);
}

// Releases gates up to `upto` and wakes the task (from whichever thread calls it).
inline void release_gates(gate_box& box, std::uint64_t upto) {
  waker to_wake;
  {
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with_mut([&](gate_box::guarded& g) {
      if (g.released < upto) g.released = upto;
      to_wake = g.stored;
    });
  }
  std::move(to_wake).wake();
}

// What one task's controller saw.
struct abort_record {
  abort_script script = abort_script::never;
  bool finished_before_abort = false;  // is_finished() was true before abort()
  bool dropped = false;                // aborted by dropping an abort_on_drop: nothing to join
  std::optional<expected<std::uint64_t, join_error>> outcome;
};

inline std::string outcome_text(std::uint64_t id, const expected<std::uint64_t, join_error>& r) {
  if (!r) return to_string(r.error().get_kind());
  if (r.value() != gated_value(id)) return "wrong value " + std::to_string(r.value());
  return "ok";
}

// A controller on another thread plays its task's script.
inline void control_remote(abort_world& w, std::uint64_t id, std::uint64_t steps, abort_record& rec,
                           join_handle<std::uint64_t>& h) {
  gate_box& box = *w.boxes[id];
  switch (rec.script) {
    case abort_script::race: {
      const std::uint64_t before = w.sim.pick(0, steps);
      for (std::uint64_t g = 1; g <= before; ++g) {
        release_gates(box, g);
        if (w.sim.chance(1, 2)) platform::yield_thread();
      }
      if (w.sim.chance(1, 4)) {
        { abort_on_drop<std::uint64_t> guard(std::move(h)); }  // aborts here
        rec.dropped = true;
      } else {
        h.abort();
      }
      w.aborts.abort_returned(id, false);
      // The rest one at a time, each a wake: a body the abort failed to stop (or a guard that let
      // its task go on) is resumed by a poll per gate, more than the one a remote abort may overlap.
      for (std::uint64_t g = before + 1; g <= steps; ++g) {
        release_gates(box, g);
        platform::yield_thread();
      }
      break;
    }
    case abort_script::after: {
      release_gates(box, steps);
      {
        sync::unique_lock<sync::mutex> hold(box.lock);
        while (!box.state.with([](const gate_box::guarded& g) { return g.gone; })) box.changed.wait(hold);
      }
      // The frame is gone; the completion follows in the same poll of the loop's thread.
      while (!h.is_finished()) platform::yield_thread();
      rec.finished_before_abort = true;
      h.abort();
      w.aborts.abort_returned(id, false);
      break;
    }
    case abort_script::never:
      release_gates(box, steps);
      break;
  }
  if (!rec.dropped) rec.outcome = h.join();
}

// The loop thread's controller task: plays the scripts of the tasks it owns, one after another.
inline task<void> control_on_owner(abort_world* w, std::uint64_t steps, std::vector<std::uint64_t> ids,
                                   std::vector<abort_record>* records,
                                   std::vector<join_handle<std::uint64_t>>* handles) {
  for (const std::uint64_t id : ids) {
    abort_record& rec = (*records)[id];
    join_handle<std::uint64_t>& h = (*handles)[id];
    gate_box& box = *w->boxes[id];
    auto let_it_run = [w]() -> task<void> {
      for (std::uint64_t n = w->sim.pick(0, 3); n > 0; --n) {
        try {
          co_await yield_now();
        } catch (const injected_fault&) {
          // Only a pause for the other microtasks.
        }
      }
    };
    switch (rec.script) {
      case abort_script::race: {
        const std::uint64_t before = w->sim.pick(0, steps);
        for (std::uint64_t g = 1; g <= before; ++g) {
          release_gates(box, g);
          co_await let_it_run();
        }
        h.abort();
        w->aborts.abort_returned(id, true);
        release_gates(box, steps);
        co_await let_it_run();
        break;
      }
      case abort_script::after:
        release_gates(box, steps);
        while (!h.is_finished()) {
          try {
            co_await yield_now();
          } catch (const injected_fault&) {
            // Looks again.
          }
        }
        rec.finished_before_abort = true;
        h.abort();
        w->aborts.abort_returned(id, true);
        break;
      case abort_script::never:
        release_gates(box, steps);
        break;
    }
    rec.outcome = co_await settle_join(h);
  }
}

inline void abort_race(context& sim) {
  const auto tasks = static_cast<std::uint64_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(3, 10))));
  const auto threads_n = static_cast<std::uint64_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto steps = static_cast<std::uint64_t>(sim.param("steps", static_cast<std::int64_t>(sim.pick(1, 4))));

  abort_world world(sim, platform::current_thread_id());
  event_loop loop;  // destroyed before `world`: a frame it may still destroy reports there
  world.outcomes.allow_panics(sim.fault_enabled(platform::fault::task_exception));
  std::vector<abort_record> records(tasks);
  std::vector<join_handle<std::uint64_t>> handles;
  std::vector<std::vector<std::uint64_t>> owned(threads_n + 1);  // [threads_n]: the loop's thread
  for (std::uint64_t j = 0; j < tasks; ++j) {
    world.boxes.push_back(std::make_unique<gate_box>());
    records[j].script = static_cast<abort_script>(sim.pick(0, abort_script_count - 1));
    owned[sim.pick(0, threads_n)].push_back(j);
  }
  for (std::uint64_t j = 0; j < tasks; ++j) handles.push_back(loop.spawn(gated_task(&world, j, steps)));

  thread_handle loop_handle = loop.handle();
  std::uint64_t remote_done = 0;  // the loop's thread only (counted by macrotasks)
  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  for (std::uint64_t k = 0; k < threads_n; ++k) {
    threads.push_back(sim.start_thread([&, k] {
      sim.name_thread("controller-" + std::to_string(k));
      for (const std::uint64_t j : owned[k]) control_remote(world, j, steps, records[j], handles[j]);
      // Tell the loop's thread; a refusal (an injected `full`) is retried.
      while (!loop_handle.queue_macrotask([&remote_done] { ++remote_done; })) platform::yield_thread();
    }));
  }

  join_handle<void> owner_script =
      loop.spawn(control_on_owner(&world, steps, owned[threads_n], &records, &handles));
  loop.run_until([&] { return remote_done == threads_n && owner_script.is_finished(); });
  for (auto& t : threads) t.join();
  if (auto r = owner_script.join(); !r) {
    sim.fail(std::string("abort_race: the loop thread's script ended ") + to_string(r.error().get_kind()));
  }

  std::uint64_t cancelled = 0;
  for (std::uint64_t j = 0; j < tasks; ++j) {
    const abort_record& rec = records[j];
    if (rec.dropped) continue;  // nobody reads the outcome
    if (!rec.outcome) {
      sim.fail("abort_race: task " + std::to_string(j) + " was never joined");
      continue;
    }
    const bool keeps_value =
        rec.script == abort_script::never || rec.finished_before_abort || world.aborts.finished(j);
    world.outcomes.admitted(j, keeps_value ? "ok" : "cancelled");
    const std::string got = outcome_text(j, *rec.outcome);
    if (got == "cancelled") ++cancelled;
    world.outcomes.terminal(j, got);
  }
  loop.run();  // nothing should be left; frames of dropped handles' tasks are gone by now
  world.outcomes.check();
  world.aborts.check();
  sim.note("abort_race: " + std::to_string(tasks) + " tasks, " + std::to_string(cancelled) + " joined cancelled");
}

// The knobs abort_race reads and their accepted ranges.
inline std::vector<knob> abort_race_knobs() {
  return {
      {"tasks", 1, 1'000, "gated tasks, each with one controller"},
      {"threads", 1, 64, "controller threads besides the loop's"},
      {"steps", 1, 1'000, "gates each task passes"},
  };
}

}  // namespace weft::sim::scenarios
