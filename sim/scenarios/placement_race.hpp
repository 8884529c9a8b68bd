// placement_race — placements from workers and outside threads racing a stop.
//
// A runtime of `workers` workers. `threads` outside threads and `worker_submitters` tasks (the
// k-th on worker k mod workers) each make `rounds` submissions, each one of: spawn_everywhere(f),
// spawn_everywhere(input, f), spawn_anywhere(input, f), worker_scheduler(i).spawn(f) or
// spawn_anywhere(f). `input` is a thread-aware value that records every relocate(from, to) it
// gets (the thread, from and to) in itself and in the placement ledger. Every factory records
// the worker it runs on (builtins::current().worker()) and, for an input, checks the input's
// record there; every task yields or not, then returns its own id. A stopper requests the stop
// after `stop_after` submissions; with 0 nothing stops the runtime before every handle was
// joined, so every placement must run where it was placed.
//
// Oracles:
//   * oracles/placement.hpp: spawn_everywhere returns one handle per worker, and handle i
//     delivers worker i's task (each task returns its id, which the factory derives from the
//     worker it runs on); worker_scheduler(i).spawn runs on worker i; no factory runs twice; an
//     input is relocated exactly once before its factory, on the factory's thread, with from =
//     the submitter (external_worker outside the runtime) and to = the destination; no input of
//     a placement that never ran is relocated; without a stop nothing is refused.
//   * oracles/tasks.hpp: every admitted task reaches one terminal outcome, refused ones never
//     run, nothing is stranded, tasks never change worker.
//
// Knobs: workers (1..4), threads (1..3), worker_submitters (0..2), rounds (1..6), stop_after.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/placement.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/task.hpp>
#include <weft/thread_aware.hpp>
#include <weft/time.hpp>

#include "runtime_submitters.hpp"

namespace weft::sim::scenarios {

// A placed task's handle under the ledger id of its task.
struct placed {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

// Scenario-side state shared by every simulated thread (plain data: see oracles/submissions.hpp).
struct placement_world {
  placement_world(context& s, std::size_t workers) : sim(s), ledger(s), placement(s, workers), workers(workers) {}
  context& sim;
  oracles::task_ledger ledger;
  oracles::placement_ledger placement;
  std::size_t workers;
  std::uint64_t next_id = 1;
  std::uint64_t submissions = 0;  // submission calls made so far
  std::size_t submitters_done = 0;
  bool stop_requested = false;    // set before any stop request reaches the runtime
};

// A thread-aware input: each copy keeps the record of its own relocations.
struct placement_input {
  placement_world* world = nullptr;
  std::uint64_t submission = 0;
  oracles::placement_ledger::relocation_log log;
  void relocate(worker_id from, worker_id to) {
    ++log.count;
    log.thread = platform::current_thread_id();
    log.from = from;
    log.to = to;
    world->placement.relocated(submission, to);
  }
};
static_assert(thread_aware<placement_input>);

inline std::size_t current_worker_index() { return builtins::current().worker().index; }

inline task<std::uint64_t> placed_body(placement_world* w, std::uint64_t id, bool yields) {
  w->ledger.started(id, platform::current_thread_id());
  if (yields) {
    co_await yield_now();
    w->ledger.resumed(id, platform::current_thread_id());
  }
  w->ledger.finished(id);
  co_return id;
}

// One submission through a way the seed picks; `from` is the submitter's worker
// (external_worker for an outside thread). Handles go to `out`.
inline void place_one(placement_world& world, scheduler& sched, std::vector<scheduler>& pinned, worker_id from,
                      std::vector<placed>& out) {
  context& sim = world.sim;
  placement_world* w = &world;
  const bool yields = sim.chance(1, 2);
  const std::uint64_t how = sim.pick(0, 4);
  if (how <= 1) {
    // One task per worker: the copies are identical, so a task's id is first + its worker, and
    // handle i must deliver first + i.
    const std::uint64_t first = world.next_id;
    world.next_id += world.workers;
    std::vector<join_handle<std::uint64_t>> handles;
    if (how == 0) {
      handles = sched.spawn_everywhere([w, first, yields] {
        const std::size_t me = current_worker_index();
        w->placement.factory_ran(first + me, std::nullopt, me);
        return placed_body(w, first + me, yields);
      });
    } else {
      handles = sched.spawn_everywhere(placement_input{w, first, {}}, [w, first, yields, from](placement_input in) {
        const std::size_t me = current_worker_index();
        w->placement.factory_ran(first + me, std::nullopt, me);
        w->placement.input_arrived(first, in.log, from, me, platform::current_thread_id());
        return placed_body(w, first + me, yields);
      });
    }
    world.placement.everywhere_returned(first, handles.size());
    for (std::size_t i = 0; i < handles.size() && i < world.workers; ++i) out.push_back({first + i, std::move(handles[i])});
    return;
  }
  const std::uint64_t id = world.next_id++;
  if (how == 2) {
    out.push_back({id, sched.spawn_anywhere(placement_input{w, id, {}}, [w, id, yields, from](placement_input in) {
                     const std::size_t me = current_worker_index();
                     w->placement.factory_ran(id, std::nullopt, me);
                     w->placement.input_arrived(id, in.log, from, me, platform::current_thread_id());
                     return placed_body(w, id, yields);
                   })});
  } else if (how == 3) {
    const std::size_t target = sim.pick(0, world.workers - 1);
    out.push_back({id, pinned[target].spawn([w, id, yields, target] {
                     w->placement.factory_ran(id, target, current_worker_index());
                     return placed_body(w, id, yields);
                   })});
  } else {
    out.push_back({id, sched.spawn_anywhere([w, id, yields] {
                     w->placement.factory_ran(id, std::nullopt, current_worker_index());
                     return placed_body(w, id, yields);
                   })});
  }
}

// A task on a worker that makes `rounds` submissions through its worker's own scheduler.
inline task<std::uint64_t> placing_task(placement_world* w, std::uint64_t id, std::uint64_t rounds,
                                        std::vector<scheduler>* pinned, std::vector<placed>* out) {
  w->ledger.started(id, platform::current_thread_id());
  scheduler mine = builtins::current().scheduler();
  const worker_id here = builtins::current().worker();
  for (std::uint64_t r = 0; r < rounds; ++r) {
    place_one(*w, mine, *pinned, here, *out);
    ++w->submissions;
    co_await yield_now();
    w->ledger.resumed(id, platform::current_thread_id());
  }
  w->ledger.finished(id);
  co_return id;
}

// Reads the outcome of a handle into both ledgers. `before_stop`: the runtime runs, so the join
// waits for the task, and a refusal needs a cause (a stop request, or an injected `full`); after
// the stop an unfinished handle is stranded.
inline void settle_placed(placement_world& world, placed& p, bool before_stop) {
  if (!before_stop && !p.handle.is_finished()) {
    world.ledger.settle(p.id, p.handle);  // stranded
    return;
  }
  const auto result = p.handle.join();
  const auto kind = oracles::task_ledger::kind_of(result);
  if (result) world.placement.delivered(p.id, result.value());
  if (before_stop && kind.text == "rejected" && !world.stop_requested &&
      !(kind.reason == queue_error::full && world.sim.fault_enabled(platform::fault::inbox_full))) {
    world.placement.refused_without_cause(p.id, to_string(kind.reason));
  }
  world.ledger.answered(p.id, kind.text != "rejected");
  world.ledger.outcome(p.id, kind);
}

// Settles every placement still listed (`joined`: the runtime still runs and each must have run)
// and empties the lists.
inline void settle_all(placement_world& world, std::vector<placed>& submitter_tasks,
                       std::vector<std::vector<placed>>& from_tasks, std::vector<std::vector<placed>>& from_threads,
                       bool joined) {
  for (auto& p : submitter_tasks) settle_placed(world, p, joined);  // their lists are complete then
  submitter_tasks.clear();
  for (auto* lists : {&from_tasks, &from_threads}) {
    for (auto& list : *lists) {
      for (auto& p : list) settle_placed(world, p, joined);
      list.clear();
    }
  }
}

inline void placement_race(context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 4))));
  const auto threads = static_cast<std::size_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto worker_submitters =
      static_cast<std::size_t>(sim.param("worker_submitters", static_cast<std::int64_t>(sim.pick(0, 2))));
  const auto rounds = static_cast<std::uint64_t>(sim.param("rounds", static_cast<std::int64_t>(sim.pick(1, 6))));
  const auto stop_after = static_cast<std::uint64_t>(
      sim.param("stop_after", static_cast<std::int64_t>(sim.pick(0, (threads + worker_submitters) * rounds))));
  placement_world world(sim, workers);
  world.ledger.allow_panics(sim.fault_enabled(platform::fault::task_exception));

  std::optional<runtime> rt;
  if (!start_runtime(sim, runtime::builder().workers(workers), rt, "placement_race")) return;
  const runtime_operations ops = rt->operations();
  const auto request_stop = [&world, ops] {
    world.stop_requested = true;
    ops.request_stop();
  };
  sim.arm_stop_requests(request_stop);
  const scheduler sched = rt->scheduler();
  std::vector<scheduler> pinned;
  for (std::size_t i = 0; i < workers; ++i) pinned.push_back(rt->worker_scheduler(i));

  // Submitting tasks on the workers, then outside threads.
  std::vector<std::vector<placed>> from_tasks(worker_submitters);
  std::vector<placed> submitter_tasks;
  for (std::size_t k = 0; k < worker_submitters; ++k) {
    const std::uint64_t id = world.next_id++;
    submitter_tasks.push_back({id, pinned[k % workers].spawn([w = &world, id, rounds, p = &pinned, out = &from_tasks[k]] {
                                 return placing_task(w, id, rounds, p, out);
                               })});
  }
  std::vector<std::vector<placed>> from_threads(threads);
  std::vector<platform::thread> submitters;
  for (std::size_t t = 0; t < threads; ++t) {
    submitters.push_back(sim.start_thread([&, t] {
      sim.name_thread("placer-" + std::to_string(t));
      scheduler mine = sched;
      for (std::uint64_t r = 0; r < rounds; ++r) {
        place_one(world, mine, pinned, external_worker, from_threads[t]);
        ++world.submissions;
        platform::yield_thread();
      }
      ++world.submitters_done;
    }));
  }
  std::optional<platform::thread> stopper;
  if (stop_after > 0) {
    stopper.emplace(sim.start_thread([&] {
      sim.name_thread("stopper");
      while (world.submissions < stop_after && world.submitters_done < threads && !ops.stop_requested()) {
        platform::yield_thread();
      }
      request_stop();
    }));
  }
  for (auto& t : submitters) t.join();
  // Without a stop every placement settles: join them all first, so each must have run.
  const bool settle_first = stop_after == 0;
  if (settle_first) settle_all(world, submitter_tasks, from_tasks, from_threads, true);
  const stop_outcome out = std::move(*rt).stop();
  sim.disarm_stop_requests();
  if (stopper) stopper->join();
  if (out.is_error()) sim.fail("placement_race: stop() from the main thread answered error");
  settle_all(world, submitter_tasks, from_tasks, from_threads, false);
  world.ledger.check();
  world.placement.check();
  sim.note("placement_race: " + std::to_string(world.submissions) + " submissions, ok=" +
           std::to_string(world.ledger.count("ok")) + " rejected=" + std::to_string(world.ledger.count("rejected")) +
           " cancelled=" + std::to_string(world.ledger.count("cancelled")));
}

// The knobs placement_race reads and their accepted ranges.
inline std::vector<knob> placement_race_knobs() {
  return {
      {"workers", 1, 64, "runtime workers"},
      {"threads", 0, 64, "outside threads placing work"},
      {"worker_submitters", 0, 64, "tasks on the workers placing work"},
      {"rounds", 1, 10'000, "submissions per placing thread or task"},
      {"stop_after", 0, 1'280'000, "submissions before a stop request (0: only the final stop)"},
  };
}

}  // namespace weft::sim::scenarios
