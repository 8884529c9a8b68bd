// blocking_saturation — spawn_blocking against a tiny blocking pool, racing a stop.
//
// A runtime whose blocking pool has `max_threads` threads and `max_queued` queue slots (1..2
// each; shared or per worker). `callers` external threads and the workers' own tasks call
// spawn_blocking `calls` times each; every callback yields a few times (it "blocks"), so the
// pool saturates and calls are refused with `full`. A stopper requests the stop after
// `stop_after` calls (or never, 0 = only the final stop()). With per-worker pools the callers
// call through worker_scheduler(k) for a k of their choosing, so every call's pool is known.
//
// Oracles:
//   * oracles/tasks.hpp, blocking entries: every call is either run or rejected, never both —
//     `ok` means the callback ran exactly once and finished, `rejected` (full or closed) means
//     it never started, `cancelled` (the stop) means it ran at most once. Every admitted call
//     reaches exactly one outcome; none is stranded (a lost one is a deadlock at join).
//   * oracles/blocking_capacity.hpp: at every admission and every callback start, no pool runs
//     more than max_threads callbacks at once or on more than max_threads threads, and (until a
//     stop is requested) holds no more than max_threads + max_queued admitted, unfinished calls.
//
//   * oracles/blocking_lifecycle.hpp: when stop() returns no callback is running, and none starts
//     or ends afterwards; with `aborts`, a caller aborts some of its calls and joins them at once,
//     and a callback whose aborted handle answered `cancelled` before it started never starts.
//
// Knobs: workers (1..2), max_threads, max_queued, callers (1..3), calls (2..6), stop_after,
// per_worker (0 or 1; one in three seeds), aborts (0 or 1; half the seeds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/blocking_capacity.hpp>
#include <weft/sim/oracles/blocking_lifecycle.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/task.hpp>

#include "runtime_submitters.hpp"

namespace weft::sim::scenarios {

struct blocking_world {
  blocking_world(context& s, std::size_t pools, std::size_t max_threads, std::size_t max_queued)
      : ledger(s), capacity(s, pools, max_threads, max_queued), lifecycle(s, pools, max_threads) {}
  oracles::task_ledger ledger;
  oracles::blocking_capacity capacity;
  oracles::blocking_lifecycle lifecycle;
  std::uint64_t next_id = 1;
  std::uint64_t calls_made = 0;
  std::uint64_t full = 0;
  std::uint64_t closed = 0;
};

// One spawn_blocking call through `sched`, whose calls go to blocking pool `pool`, recorded in
// the ledger and the capacity oracle; returns its handle.
inline join_handle<std::uint64_t> blocking_call(blocking_world* w, scheduler& sched, std::size_t pool,
                                                std::uint64_t id, std::uint64_t work) {
  w->ledger.mark_blocking(id);
  ++w->calls_made;
  auto handle = sched.spawn_blocking([w, pool, id, work] {
    w->capacity.entered(pool, id, platform::current_thread_id());
    w->lifecycle.entered(pool, id);
    w->ledger.started(id, platform::current_thread_id());
    for (std::uint64_t i = 0; i < work; ++i) platform::yield_thread();  // "blocks"
    w->ledger.finished(id);
    w->capacity.exited(pool, id);
    w->lifecycle.exited(pool, id);
    return id;
  });
  // Unfinished: admitted to the pool (a refusal comes back finished).
  if (!handle.is_finished()) w->capacity.admitted(pool, id);
  return handle;
}

inline void settle(blocking_world& w, std::uint64_t id, const expected<std::uint64_t, join_error>& result) {
  const auto kind = oracles::task_ledger::kind_of(result);
  if (kind.text == "rejected") (kind.reason == queue_error::full ? w.full : w.closed) += 1;
  w.ledger.answered(id, kind.text != "rejected");
  w.ledger.outcome(id, kind);
}

// Steps the main thread yields after stop() returned, for a callback still running to show.
inline constexpr std::size_t settle_steps = 8;
// Yields of a long callback.
inline constexpr std::uint64_t long_work = 64;

// The knobs of one run, read in this order (each default is a pick from the seed).
struct blocking_saturation_params {
  std::size_t workers = 0;
  std::size_t max_threads = 0;
  std::size_t max_queued = 0;
  std::size_t callers = 0;
  std::uint64_t calls = 0;
  std::uint64_t stop_after = 0;
  bool per_worker = false;
  bool aborts = false;

  std::size_t pools() const { return per_worker ? workers : 1; }
  std::size_t pool_of(std::size_t worker) const { return per_worker ? worker : 0; }
};

inline blocking_saturation_params read_blocking_saturation_params(context& sim) {
  blocking_saturation_params p;
  p.workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 2))));
  p.max_threads = static_cast<std::size_t>(sim.param("max_threads", static_cast<std::int64_t>(sim.pick(1, 2))));
  p.max_queued = static_cast<std::size_t>(sim.param("max_queued", static_cast<std::int64_t>(sim.pick(1, 2))));
  p.callers = static_cast<std::size_t>(sim.param("callers", static_cast<std::int64_t>(sim.pick(1, 3))));
  p.calls = static_cast<std::uint64_t>(sim.param("calls", static_cast<std::int64_t>(sim.pick(2, 6))));
  p.stop_after = static_cast<std::uint64_t>(
      sim.param("stop_after", static_cast<std::int64_t>(sim.pick(0, (p.callers + p.workers) * p.calls))));
  p.per_worker = sim.param("per_worker", sim.chance(1, 3) ? 1 : 0) == 1;
  p.aborts = sim.param("aborts", sim.chance(1, 2) ? 1 : 0) == 1;
  return p;
}

// A call (or a worker's task of calls) and the handle that answers it.
struct issued_blocking_call {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

// A worker's task: `n` blocking calls through its own worker's scheduler, each awaited there.
inline task<std::uint64_t> worker_blocking_calls(blocking_world* wd, std::size_t p, std::uint64_t tid,
                                                 std::uint64_t base, std::uint64_t n, std::uint64_t k) {
  wd->ledger.started(tid, platform::current_thread_id());
  scheduler mine = builtins::current().scheduler();
  for (std::uint64_t c = 0; c < n; ++c) {
    oracles::task_ledger::awaiting guard{&wd->ledger, base + c};
    auto h = blocking_call(wd, mine, p, base + c, k);
    auto result = co_await h;
    wd->ledger.resumed(tid, platform::current_thread_id());
    settle(*wd, base + c, result);
    guard.settled = true;
  }
  wd->ledger.finished(tid);
  co_return n;
}

// Step: tasks on the workers call spawn_blocking too, and await their handles there.
inline std::vector<issued_blocking_call> spawn_worker_calls(context& sim, const blocking_saturation_params& p,
                                                            blocking_world& world, std::vector<scheduler>& pinned) {
  std::vector<issued_blocking_call> from_tasks;
  for (std::size_t i = 0; i < p.workers; ++i) {
    const std::uint64_t task_id = world.next_id++;
    const std::uint64_t first = world.next_id;
    world.next_id += p.calls;
    const std::uint64_t work = sim.pick(0, 3);
    from_tasks.push_back({task_id, pinned[i].spawn([w = &world, pool = p.pool_of(i), task_id, first,
                                                    calls = p.calls, work] {
                            return worker_blocking_calls(w, pool, task_id, first, calls, work);
                          })});
  }
  return from_tasks;
}

// Step, on a caller thread: its `calls` calls, each on a pool of its choosing; with `aborts` some
// are aborted and joined at once, the others kept in `kept` to be settled later.
inline void make_caller_calls(context& sim, const blocking_saturation_params& p, blocking_world& world,
                              const scheduler& sched, const std::vector<scheduler>& pinned,
                              std::vector<issued_blocking_call>& kept) {
  for (std::uint64_t k = 0; k < p.calls; ++k) {
    const std::uint64_t id = world.next_id++;
    // With per-worker pools the runtime's scheduler would pick the pool: name the worker.
    const std::size_t target = sim.pick(0, p.workers - 1);
    scheduler mine = p.per_worker ? pinned[target] : sched;
    // Now and then a long callback, still running when a stop gets to the pools.
    const std::uint64_t work = sim.chance(1, 4) ? long_work : sim.pick(0, 3);
    auto handle = blocking_call(&world, mine, p.pool_of(target), id, work);
    if (p.aborts && sim.chance(1, 3)) {
      // An aborted job still queued leaves its pool unrun, with no trace the capacity oracle
      // sees: its in-flight count ends here, as at a stop.
      world.capacity.stopping();
      handle.abort();
      const auto result = handle.join();
      if (oracles::task_ledger::kind_of(result).text == "cancelled") {
        world.lifecycle.aborted_answered_cancelled(p.pool_of(target), id);
      }
      settle(world, id, result);
      continue;
    }
    kept.push_back({id, std::move(handle)});
    platform::yield_thread();
  }
}

// Step: stop() from the main thread, then a few steps in which a callback it failed to wait for
// would start or end.
inline void stop_blocking_runtime(context& sim, blocking_world& world, std::optional<runtime>& rt,
                                  std::optional<platform::thread>& stopper) {
  world.capacity.stopping();
  const stop_outcome out = std::move(*rt).stop();
  world.lifecycle.stop_returned();
  for (std::size_t i = 0; i < settle_steps; ++i) platform::yield_thread();
  sim.disarm_stop_requests();
  if (stopper) stopper->join();
  if (out.is_error()) sim.fail("blocking_saturation: stop() from the main thread answered error");
}

// Step, after the stop: every caller's kept call is answered (an unfinished one is stranded),
// and every worker's task settles.
inline void settle_after_stop(blocking_world& world, std::vector<std::vector<issued_blocking_call>>& per_caller,
                              std::vector<issued_blocking_call>& from_tasks) {
  for (auto& list : per_caller) {
    for (auto& [id, h] : list) {
      if (!h.is_finished()) {
        world.ledger.answered(id, true);
        world.ledger.stranded(id);
        h.detach();
        continue;
      }
      settle(world, id, h.join());
    }
  }
  for (auto& [id, h] : from_tasks) world.ledger.settle(id, h);
}

inline void blocking_saturation(context& sim) {
  const blocking_saturation_params p = read_blocking_saturation_params(sim);
  blocking_world world(sim, p.pools(), p.max_threads, p.max_queued);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);

  std::optional<runtime> rt;
  const auto builder = runtime::builder()
                           .workers(p.workers)
                           .blocking(p.per_worker ? blocking_policy::per_worker : blocking_policy::shared)
                           .blocking_capacity(p.max_threads, p.max_queued);
  if (!start_runtime(sim, builder, rt, "blocking_saturation")) return;
  const runtime_operations ops = rt->operations();
  // Every stop request tells the capacity oracle first: from then on queued jobs may go unrun.
  const auto request_stop = [&world, ops] {
    world.capacity.stopping();
    ops.request_stop();
  };
  sim.arm_stop_requests(request_stop);
  const scheduler sched = rt->scheduler();
  std::vector<scheduler> pinned;
  for (std::size_t i = 0; i < p.workers; ++i) pinned.push_back(rt->worker_scheduler(i));
  std::vector<issued_blocking_call> from_tasks = spawn_worker_calls(sim, p, world, pinned);

  std::vector<std::vector<issued_blocking_call>> per_caller(p.callers);
  std::vector<platform::thread> threads;
  for (std::size_t c = 0; c < p.callers; ++c) {
    threads.push_back(sim.start_thread([&, c] {
      sim.name_thread("caller-" + std::to_string(c));
      make_caller_calls(sim, p, world, sched, pinned, per_caller[c]);
    }));
  }
  std::optional<platform::thread> stopper;
  if (p.stop_after > 0) {
    stopper.emplace(sim.start_thread([&] {
      sim.name_thread("stopper");
      while (world.calls_made < p.stop_after && !ops.stop_requested()) platform::yield_thread();
      request_stop();
    }));
  }
  for (auto& t : threads) t.join();
  // Without a stop the calls all settle: wait for them before stopping, so `ok` is reachable.
  if (p.stop_after == 0) {
    for (auto& list : per_caller) {
      for (auto& [id, h] : list) settle(world, id, h.join());
      list.clear();
    }
  }
  stop_blocking_runtime(sim, world, rt, stopper);
  settle_after_stop(world, per_caller, from_tasks);
  world.ledger.check();
  sim.note("blocking_saturation: " + std::to_string(world.calls_made) + " calls, ok=" +
           std::to_string(world.ledger.count("ok")) + " full=" + std::to_string(world.full) +
           " closed=" + std::to_string(world.closed) + " cancelled=" + std::to_string(world.ledger.count("cancelled")));
}

// The knobs blocking_saturation reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> blocking_saturation_knobs() {
  return {
      {"workers", 1, 64, "runtime workers"},
      {"max_threads", 1, 64, "blocking pool threads"},
      {"max_queued", 1, 1024, "blocking calls queued beyond the pool"},
      {"callers", 1, 64, "threads making blocking calls"},
      {"calls", 1, 10'000, "blocking calls per caller and worker"},
      {"stop_after", 0, 1'280'000, "answered calls before a stop request (0: only the final stop)"},
      {"per_worker", 0, 1, "1: one blocking pool per worker (blocking_policy::per_worker), 0: one shared pool"},
      {"aborts", 0, 1, "1: callers abort one in three of their calls and join it at once"},
  };
}

}  // namespace weft::sim::scenarios
