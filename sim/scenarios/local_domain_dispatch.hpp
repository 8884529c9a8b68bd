// local_domain_dispatch — a host thread drives a local_domain frame by frame while other threads
// spawn and dispatch into it.
//
// The host (the scenario's main fiber) owns a local_domain with a small inbox and runs `frames`
// frames: each frame queues 0-3 local macrotasks, drives the domain with run_n(0..4) or
// run_for(0..2 ms), then waits one virtual millisecond (so timers come due). `producers` threads each submit `items` pieces of
// work through copies of the domain's local_spawner: dispatch(fn) (a macrotask that queues one
// microtask), spawn(factory) (a task that may sleep and yield, joined by the producer),
// dispatch_future(factory). After the producers finished the host drives until every handle is
// finished (bounded), then destroys the domain.
//
// Oracles: ordering.hpp (a macrotask's microtask runs before the next macrotask; one producer's
// macrotasks run in submission order); submissions.hpp (each dispatch is accepted or refused
// once; accepted ones run exactly once, refused ones never); tasks.hpp (spawned tasks end ok,
// run only on the host thread); timers.hpp (no sleep ends early); drive_budget.hpp (run_n(n)
// reports at most n turns, run_for(0) none, and no call runs more macrotasks than the turns it
// reports — the dispatched and the host's local macrotasks are counted).
//
// Knobs: producers (1..3), items (4..16), capacity (1..4), frames (drive budget).
//
// Variant `macro_follow_up` (test-only, proves the ordering oracle can fail): the dispatched
// callback queues its follow-up as a macrotask instead of a microtask.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/local_domain.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/drive_budget.hpp>
#include <weft/sim/oracles/ordering.hpp>
#include <weft/sim/oracles/submissions.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

namespace weft::sim::scenarios {

enum class local_domain_variant { correct, macro_follow_up };

struct domain_world {
  explicit domain_world(context& s) : order(s), tasks(s), timers(s), budget(s) {}
  oracles::loop_order_ledger order;
  oracles::submission_ledger dispatches;
  oracles::task_ledger tasks;
  oracles::timer_ledger timers;
  oracles::drive_budget_ledger budget;
  std::uint64_t host_thread = 0;
  std::uint64_t next_timer = 1;
};

inline task<std::uint64_t> domain_task(domain_world* w, std::uint64_t id, bool sleeps) {
  w->tasks.started(id, platform::current_thread_id());
  if (w->host_thread != platform::current_thread_id()) {
    w->tasks.resumed(id, w->host_thread);  // reports "changed worker": it must run on the host
  }
  if (sleeps) {
    const std::uint64_t timer = w->next_timer++;
    const instant deadline = platform::clock::now() + std::chrono::milliseconds(1);
    w->timers.armed(timer, deadline);
    co_await sleep_until(deadline);
    w->timers.fired(timer, platform::clock::now());
    w->tasks.resumed(id, platform::current_thread_id());
  }
  co_await yield_now();
  w->tasks.resumed(id, platform::current_thread_id());
  w->tasks.finished(id);
  co_return id;
}

// One virtual millisecond on the host: a timed wait nobody notifies.
inline void host_frame_pause() {
  sync::mutex m;
  sync::condvar cv;
  sync::unique_lock<sync::mutex> hold(m);
  (void)cv.wait_until(hold, platform::clock::now() + std::chrono::milliseconds(1));
}

// A task the domain spawned for producer item `id`, and its handle.
struct domain_spawned {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

// Producer `p` submits its item `k` one of three ways the seed picks: a dispatched macrotask
// (which queues a follow-up microtask), a spawned task, or a dispatched future.
template <local_domain_variant Variant>
void produce_item(context& sim, domain_world& world, local_spawner& mine, std::size_t p, std::uint64_t k,
                  std::vector<domain_spawned>& spawned) {
  const std::uint64_t id = (p + 1) * 1'000 + k;
  const std::uint64_t how = sim.pick(0, 2);
  if (how == 0) {
    const submit_result r = mine.dispatch([w = &world, id, p, k] {
      w->budget.macrotask_ran();
      w->dispatches.ran(id);
      w->order.macrotask_started(id, p, k);
      w->order.microtask_queued(id);
      if constexpr (Variant == local_domain_variant::correct) {
        event_loop::current()->queue_microtask([w, id] { w->order.microtask_ran(id); });
      } else {
        event_loop::current()->queue_macrotask([w, id] { w->order.microtask_ran(id); });  // BUG (test-only)
      }
    });
    if (r) {
      world.dispatches.accepted(id);
    } else {
      world.dispatches.refused(id, r.error());
    }
  } else if (how == 1) {
    const bool sleeps = sim.chance(1, 2);
    spawned.push_back({id, mine.spawn([w = &world, id, sleeps] { return domain_task(w, id, sleeps); })});
  } else {
    const submit_result r = mine.dispatch_future([w = &world, id] {
      return [](domain_world* wd, std::uint64_t i) -> task<void> {
        wd->dispatches.ran(i);
        co_return;
      }(w, id);
    });
    if (r) {
      world.dispatches.accepted(id);
    } else {
      world.dispatches.refused(id, r.error());
    }
  }
}

// One host frame: 0-3 local macrotasks (so a frame often has more macrotasks queued than turns to
// run), then run_n(0..4) or run_for(0..2 ms), judged by the drive-budget oracle.
inline void drive_frame(context& sim, domain_world& world, local_domain& domain) {
  for (std::uint64_t n = sim.pick(0, 3); n > 0; --n) {
    domain.loop().queue_macrotask([w = &world] { w->budget.macrotask_ran(); });
  }
  const std::uint64_t before = world.budget.before_call();
  if (sim.chance(1, 2)) {
    const std::uint64_t steps = sim.pick(0, 4);
    world.budget.after_run_n(steps, domain.run_n(steps), before);
  } else {
    const std::uint64_t ms = sim.pick(0, 2);
    const run_stats stats = domain.run_for(std::chrono::milliseconds(ms));
    world.budget.after_run_for(ms == 0, stats.drive_steps, before);
  }
}

template <local_domain_variant Variant>
void local_domain_dispatch(context& sim) {
  const auto producers = static_cast<std::size_t>(sim.param("producers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto items = static_cast<std::uint64_t>(sim.param("items", static_cast<std::int64_t>(sim.pick(4, 16))));
  const auto capacity = static_cast<std::size_t>(sim.param("capacity", static_cast<std::int64_t>(sim.pick(1, 4))));
  const auto frames = static_cast<std::uint64_t>(sim.param("frames", 400));
  domain_world world(sim);
  world.host_thread = platform::current_thread_id();
  world.tasks.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);

  event_loop::options opts;
  opts.inbox_capacity = capacity;
  std::optional<local_domain> domain(std::in_place, opts);
  const local_spawner spawner = domain->spawner();

  std::vector<std::vector<domain_spawned>> handles(producers);
  std::size_t producers_done = 0;
  std::vector<platform::thread> threads;
  for (std::size_t p = 0; p < producers; ++p) {
    threads.push_back(sim.start_thread([&, p] {
      sim.name_thread("producer-" + std::to_string(p));
      local_spawner mine = spawner;
      for (std::uint64_t k = 0; k < items; ++k) {
        produce_item<Variant>(sim, world, mine, p, k, handles[p]);
        platform::yield_thread();
      }
      ++producers_done;
    }));
  }

  // The host's frames.
  auto all_finished = [&] {
    for (auto& list : handles) {
      for (auto& s : list) {
        if (!s.handle.is_finished()) return false;
      }
    }
    return true;
  };
  std::uint64_t frame = 0;
  for (; frame < frames; ++frame) {
    if (producers_done == producers && all_finished() && !domain->loop().has_ready_work() &&
        domain->loop().armed_timers() == 0) {
      break;
    }
    drive_frame(sim, world, *domain);
    host_frame_pause();
  }
  for (auto& t : threads) t.join();
  if (frame == frames) sim.fail("local_domain_dispatch: work still pending after " + std::to_string(frames) + " frames");
  domain.reset();  // what is left is destroyed unrun (nothing, if the frames sufficed)

  for (auto& list : handles) {
    for (auto& [id, h] : list) world.tasks.settle(id, h);
  }
  world.tasks.check();
  world.dispatches.check(sim);
  sim.note("local_domain_dispatch: " + std::to_string(frame) + " frames, " +
           std::to_string(world.dispatches.count_accepted()) + " dispatches accepted, " +
           std::to_string(world.dispatches.count_refused()) + " refused");
}

// The knobs local_domain_dispatch reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> local_domain_dispatch_knobs() {
  return {
      {"producers", 1, 64, "producer threads"},
      {"items", 1, 1000, "submissions per producer (ids are (producer + 1) * 1000 + item)"},
      {"capacity", 1, 4096, "inbox capacity"},
      {"frames", 1, 1'000'000, "frames the host drives the domain for"},
  };
}

}  // namespace weft::sim::scenarios
