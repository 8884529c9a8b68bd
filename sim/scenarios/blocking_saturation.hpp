// blocking_saturation — spawn_blocking against a tiny blocking pool, racing a stop.
//
// A runtime whose blocking pool has `max_threads` threads and `max_queued` queue slots (1..2
// each; shared or per worker). `callers` external threads and the workers' own tasks call
// spawn_blocking `calls` times each; every callback yields a few times (it "blocks"), so the
// pool saturates and calls are refused with `full`. A stopper requests the stop after
// `stop_after` calls (or never, 0 = only the final stop()).
//
// Oracle (oracles/tasks.hpp, blocking entries): every call is either run or rejected, never
// both — `ok` means the callback ran exactly once and finished, `rejected` (full or closed)
// means it never started, `cancelled` (the stop) means it ran at most once. Every admitted call
// reaches exactly one outcome; none is stranded (a lost one is a deadlock at join).
//
// Knobs: workers (1..2), max_threads, max_queued, callers (1..3), calls (2..6), stop_after.
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
#include <weft/sim/oracles/tasks.hpp>
#include <weft/task.hpp>

namespace weft::sim::scenarios {

struct blocking_world {
  explicit blocking_world(context& s) : ledger(s) {}
  oracles::task_ledger ledger;
  std::uint64_t next_id = 1;
  std::uint64_t calls_made = 0;
  std::uint64_t full = 0;
  std::uint64_t closed = 0;
};

// One spawn_blocking call through `sched`, recorded in the ledger; returns its handle.
inline join_handle<std::uint64_t> blocking_call(blocking_world* w, scheduler& sched, std::uint64_t id,
                                                std::uint64_t work) {
  w->ledger.mark_blocking(id);
  ++w->calls_made;
  return sched.spawn_blocking([w, id, work] {
    w->ledger.started(id, platform::current_thread_id());
    for (std::uint64_t i = 0; i < work; ++i) platform::yield_thread();  // "blocks"
    w->ledger.finished(id);
    return id;
  });
}

inline void settle(blocking_world& w, std::uint64_t id, const expected<std::uint64_t, join_error>& result) {
  const auto kind = oracles::task_ledger::kind_of(result);
  if (kind.text == "rejected") (kind.reason == queue_error::full ? w.full : w.closed) += 1;
  w.ledger.answered(id, kind.text != "rejected");
  w.ledger.outcome(id, kind);
}

inline void blocking_saturation(context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 2))));
  const auto max_threads = static_cast<std::size_t>(sim.param("max_threads", static_cast<std::int64_t>(sim.pick(1, 2))));
  const auto max_queued = static_cast<std::size_t>(sim.param("max_queued", static_cast<std::int64_t>(sim.pick(1, 2))));
  const auto callers = static_cast<std::size_t>(sim.param("callers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto calls = static_cast<std::uint64_t>(sim.param("calls", static_cast<std::int64_t>(sim.pick(2, 6))));
  const auto stop_after = static_cast<std::uint64_t>(
      sim.param("stop_after", static_cast<std::int64_t>(sim.pick(0, (callers + workers) * calls))));
  const bool per_worker = sim.chance(1, 3);
  blocking_world world(sim);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);

  std::optional<runtime> rt;
  try {
    rt.emplace(runtime::builder()
                   .workers(workers)
                   .blocking(per_worker ? blocking_policy::per_worker : blocking_policy::shared)
                   .blocking_capacity(max_threads, max_queued)
                   .build());
  } catch (const start_error& e) {
    sim.note(std::string("blocking_saturation: runtime did not start: ") + e.what());
    return;
  }
  const runtime_operations ops = rt->operations();
  sim.arm_stop_requests([ops] { ops.request_stop(); });
  const scheduler sched = rt->scheduler();

  // Tasks on the workers call spawn_blocking too, and await their handles there.
  struct issued {
    std::uint64_t id;
    join_handle<std::uint64_t> handle;
  };
  std::vector<issued> from_tasks;
  for (std::size_t i = 0; i < workers; ++i) {
    const std::uint64_t task_id = world.next_id++;
    const std::uint64_t first = world.next_id;
    world.next_id += calls;
    const std::uint64_t work = sim.pick(0, 3);
    from_tasks.push_back({task_id, rt->worker_scheduler(i).spawn([w = &world, task_id, first, calls, work] {
                            return [](blocking_world* wd, std::uint64_t tid, std::uint64_t base, std::uint64_t n,
                                      std::uint64_t k) -> task<std::uint64_t> {
                              wd->ledger.started(tid, platform::current_thread_id());
                              scheduler mine = builtins::current().scheduler();
                              for (std::uint64_t c = 0; c < n; ++c) {
                                oracles::task_ledger::awaiting guard{&wd->ledger, base + c};
                                auto h = blocking_call(wd, mine, base + c, k);
                                auto result = co_await h;
                                wd->ledger.resumed(tid, platform::current_thread_id());
                                settle(*wd, base + c, result);
                                guard.settled = true;
                              }
                              wd->ledger.finished(tid);
                              co_return n;
                            }(w, task_id, first, calls, work);
                          })});
  }

  std::vector<std::vector<issued>> per_caller(callers);
  std::vector<platform::thread> threads;
  for (std::size_t c = 0; c < callers; ++c) {
    threads.push_back(sim.start_thread([&, c] {
      sim.name_thread("caller-" + std::to_string(c));
      scheduler mine = sched;
      for (std::uint64_t k = 0; k < calls; ++k) {
        const std::uint64_t id = world.next_id++;
        per_caller[c].push_back({id, blocking_call(&world, mine, id, sim.pick(0, 3))});
        platform::yield_thread();
      }
    }));
  }
  std::optional<platform::thread> stopper;
  if (stop_after > 0) {
    stopper.emplace(sim.start_thread([&] {
      sim.name_thread("stopper");
      while (world.calls_made < stop_after && !ops.stop_requested()) platform::yield_thread();
      ops.request_stop();
    }));
  }
  for (auto& t : threads) t.join();
  // Without a stop the calls all settle: wait for them before stopping, so `ok` is reachable.
  if (stop_after == 0) {
    for (auto& list : per_caller) {
      for (auto& [id, h] : list) settle(world, id, h.join());
      list.clear();
    }
  }
  const stop_outcome out = std::move(*rt).stop();
  sim.disarm_stop_requests();
  if (stopper) stopper->join();
  if (out.is_error()) sim.fail("blocking_saturation: stop() from the main thread answered error");
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
  };
}

}  // namespace weft::sim::scenarios
