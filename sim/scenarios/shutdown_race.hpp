// shutdown_race — submissions from several threads racing a runtime's stop.
//
// A runtime of `workers` workers (default 4) with a small blocking pool. `threads` submitter
// threads share `tasks` submissions (default 100), each one of: scheduler().spawn,
// spawn_anywhere, worker_scheduler(i).spawn, spawn_everywhere (one task per worker) or
// spawn_blocking. A task sleeps (virtual time), yields, and/or spawns a child — on its own worker
// or anywhere — and awaits the child's join handle. Meanwhile the stop comes one of four ways
// (`stop_mode`): a stopper thread's request_stop(), the main thread's stop() while submitters
// still run, drain(deadline) then stop(), or a task calling request_stop() from a worker. With
// `--fault stop_request=p`, stops also land at the runtime's stop_request fault points.
//
// Oracles (oracles/tasks.hpp, oracles/admission.hpp, oracles/timers.hpp): every admitted task
// reaches exactly one terminal outcome; a rejected factory never runs; cancelled tasks never ran
// to the end; after stop() no admitted handle is unfinished (stranded); no resume after a task's
// body finished; a task resumes only on the thread it started on; a submission made after its
// submitter saw stop_requested(), or after a request_stop(), stop() or drain() returned, is
// refused `closed`; no sleep wakes before its deadline. A lost wake or a stop that never finishes
// is a deadlock the simulator reports.
//
// Knobs (--param): workers, tasks, threads, stop_mode (0..3), stop_after (submissions the stop
// waits for), stoppers (concurrent request_stop() threads in mode 0), child_percent,
// sleep_percent, quick_percent (default 0: the share of submissions
// whose task body awaits nothing — it records its start and finish and returns; a quick one is
// never a spawn_blocking).
//
// Every body records its start before anything else, so a body that runs when it must not (a
// rejected spawn, or one cancelled unadopted at shutdown) is on the ledger's record. A quick body
// is one that can run to its end outside a poll without tripping the runtime's own assertions
// (any await outside a poll does): with quick_percent=100 such a bug is left to the task oracle.
//
// Variant `finished_early` (test-only, proves the poll-after-completion oracle can fail): the
// task reports its body finished before its last await.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/admission.hpp>
#include <weft/sim/oracles/stop_report.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/time.hpp>

#include "runtime_submitters.hpp"

namespace weft::sim::scenarios {

enum class shutdown_race_variant { correct, finished_early };

// Scenario-side state shared by every simulated thread (plain data: see oracles/submissions.hpp).
struct race_world {
  explicit race_world(context& s) : sim(s), ledger(s), admission(s), stop_report(s), timers(s) {}
  context& sim;
  oracles::task_ledger ledger;
  oracles::admission_ledger admission;
  oracles::stop_report_ledger stop_report;
  oracles::timer_ledger timers;
  std::uint64_t next_id = 1;
  std::uint64_t next_timer = 1;
  std::int64_t child_percent = 40;
  std::int64_t sleep_percent = 50;
  std::int64_t quick_percent = 0;
  bool stop_from_task = false;
  std::uint64_t submissions = 0;     // submission calls made so far
  std::uint64_t submitters_done = 0;
  runtime_operations ops;
};

// A child's join handle kept in its parent's frame: if the parent is destroyed (cancelled)
// before it read the child's outcome, the ledger learns the handle was dropped unread.
struct child_watch {
  race_world* world = nullptr;
  std::uint64_t id = 0;
  join_handle<std::uint64_t> handle;
  bool delivered = false;
  child_watch(race_world* w, std::uint64_t i, join_handle<std::uint64_t> h) noexcept
      : world(w), id(i), handle(std::move(h)) {}
  child_watch(const child_watch&) = delete;
  child_watch& operator=(const child_watch&) = delete;
  ~child_watch() {
    if (!delivered) world->ledger.detached(id);
  }
};

inline std::uint64_t this_thread() noexcept { return platform::current_thread_id(); }

// The leaf task a child runs: maybe a sleep, then done.
inline task<std::uint64_t> race_child(race_world* w, std::uint64_t id, bool sleeps) {
  w->ledger.started(id, this_thread());
  if (sleeps) {
    const std::uint64_t timer = w->next_timer++;
    const instant deadline = platform::clock::now() + std::chrono::milliseconds(1);
    w->timers.armed(timer, deadline);
    co_await sleep_until(deadline);
    w->timers.fired(timer, platform::clock::now());
    w->ledger.resumed(id, this_thread());
  }
  w->ledger.finished(id);
  co_return id;
}

template <shutdown_race_variant Variant>
task<std::uint64_t> race_task(race_world* w, std::uint64_t id, std::uint32_t plan) {
  w->ledger.started(id, this_thread());  // first: a body that runs at all is on the record
  if ((plan & 0x200u) != 0) {  // quick: no await at all
    w->ledger.finished(id);
    co_return id;
  }
  if (w->stop_from_task && (plan & 0x100u) != 0) {
    builtins::current().operations().request_stop();
    w->admission.stop_request_returned();
  }
  if ((plan & 0x1u) != 0) {  // sleep
    const std::uint64_t timer = w->next_timer++;
    const instant deadline = platform::clock::now() + std::chrono::milliseconds(1 + (plan >> 12) % 5);
    w->timers.armed(timer, deadline);
    co_await sleep_until(deadline);
    w->timers.fired(timer, platform::clock::now());
    w->ledger.resumed(id, this_thread());
  }
  if ((plan & 0x2u) != 0) {  // a child, awaited through its join handle
    const std::uint64_t child = w->next_id++;
    const bool anywhere = (plan & 0x4u) != 0;
    auto factory = [w, child, sleeps = (plan & 0x8u) != 0] { return race_child(w, child, sleeps); };
    scheduler here = builtins::current().scheduler();
    w->admission.submitting(child, w->admission.before_submission(w->ops.stop_requested()));
    join_handle<std::uint64_t> h = anywhere ? here.spawn_anywhere(factory) : here.spawn(factory);
    child_watch watch(w, child, std::move(h));
    // A refused child comes back finished as `rejected`; an admitted one may also be finished
    // already. Either way awaiting it delivers the outcome.
    auto result = co_await watch.handle;
    watch.delivered = true;
    const auto kind = oracles::task_ledger::kind_of(result);
    w->ledger.answered(child, kind.text != "rejected");
    w->ledger.outcome(child, kind);
    w->admission.ended(child, kind.text, kind.reason);
    if (kind.text == "cancelled") w->stop_report.cancelled_by_stop();  // nothing else aborts here
    w->ledger.resumed(id, this_thread());
  }
  if constexpr (Variant == shutdown_race_variant::finished_early) {
    w->ledger.finished(id);  // BUG (test-only): reported before the last await
  }
  co_await yield_now();
  w->ledger.resumed(id, this_thread());
  if constexpr (Variant == shutdown_race_variant::correct) w->ledger.finished(id);
  co_return id;
}

// A submitted task (or one worker's task of a spawn_everywhere) and its handle.
struct race_submission {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

// Draws a task's plan (race_task reads its bits), in the order every seed's run depends on.
inline std::uint32_t draw_plan(context& sim, const race_world& world) {
  std::uint32_t plan = static_cast<std::uint32_t>(sim.random().next() & 0xffff'f000u);
  if (sim.chance(static_cast<std::uint64_t>(world.sleep_percent), 100)) plan |= 0x1u;
  if (sim.chance(static_cast<std::uint64_t>(world.child_percent), 100)) plan |= 0x2u;
  if (sim.chance(1, 2)) plan |= 0x4u;
  if (sim.chance(1, 2)) plan |= 0x8u;
  if (sim.chance(1, 20)) plan |= 0x100u;
  // Only when asked for (the default draws nothing, so seeds keep their runs).
  if (world.quick_percent > 0 && sim.chance(static_cast<std::uint64_t>(world.quick_percent), 100)) plan |= 0x200u;
  return plan;
}

// Submits one planned task through a way the seed picks: spawn, spawn_anywhere, a pinned
// worker's scheduler, spawn_everywhere (one task per worker) or spawn_blocking.
template <shutdown_race_variant Variant>
void submit_planned(context& sim, race_world& world, std::uint32_t plan, scheduler& sched,
                    std::vector<scheduler>& pinned, std::vector<race_submission>& out) {
  // What the submitter knows just before the call: its own stop_requested() answer, and any
  // request_stop() or drain() that has returned (the admission oracle).
  const auto seen = world.admission.before_submission(world.ops.stop_requested());
  // A quick task is never a blocking callback: the runtime's own awaiting task for one awaits
  // (so it is not quick). Without quick tasks the draw is the same as ever.
  const std::uint64_t how = sim.pick(0, (plan & 0x200u) != 0 ? submit_ways_no_blocking : submit_ways_max);
  submit_one_way(
      sim, how, world.next_id, sched, pinned,
      [w = &world, plan](std::uint64_t id) { return race_task<Variant>(w, id, plan); },
      [&world](std::uint64_t id) {
        world.ledger.mark_blocking(id);
        return [w = &world, id] {
          w->ledger.started(id, this_thread());
          platform::yield_thread();
          w->ledger.finished(id);
          return id;
        };
      },
      [&out, &world, seen](std::uint64_t id, join_handle<std::uint64_t> h) {
        world.admission.submitting(id, seen);
        out.push_back(race_submission{id, std::move(h)});
      });
}

// How the main thread stops the runtime while the submitters run: 0 stopper threads request
// the stop (concurrently, when there are several), 1 stop() at once, 2 a drain with a short
// deadline first, 3 tasks request it.
struct race_stop_plan {
  std::int64_t mode = 0;
  std::int64_t after_submissions = 0;  // the stopper (modes 0-2) waits for this many first
  std::int64_t stoppers = 1;           // stopper threads in mode 0
  // The most scheduling points a stopper waits for `after_submissions` before it stops anyway.
  static constexpr std::uint64_t wait_spins_max = 2'000;
};

// Stops `rt` as `plan` says, racing `submitters`, and joins every thread it started.
inline stop_outcome stop_racing(context& sim, race_world& world, std::optional<runtime>& rt,
                                std::vector<platform::thread>& submitters, const race_stop_plan& plan) {
  const std::size_t threads = submitters.size();
  auto wait_a_while = [&] {
    // Bounded: under PCT a spinning waiter of top priority starves the submitters it waits for
    // until a change point demotes it, and several spinning stoppers can outlast the points.
    for (std::uint64_t spins = 0; spins < race_stop_plan::wait_spins_max &&
                                  world.submissions < static_cast<std::uint64_t>(plan.after_submissions) &&
                                  world.submitters_done < threads;
         ++spins) {
      platform::yield_thread();
    }
  };
  std::vector<platform::thread> stoppers;
  if (plan.mode == 0) {
    for (std::int64_t i = 0; i < plan.stoppers; ++i) {
      stoppers.push_back(sim.start_thread([&, i] {
        sim.name_thread("stopper-" + std::to_string(i));
        wait_a_while();
        world.ops.request_stop();
        world.admission.stop_request_returned();
      }));
    }
  }
  if (plan.mode == 1) wait_a_while();
  if (plan.mode == 2) {
    wait_a_while();
    const drain_outcome d = rt->drain(std::chrono::milliseconds(sim.pick(0, 4)));
    world.admission.drain_returned();
    sim.note(d == drain_outcome::drained ? "drain: drained" : "drain: timed out");
  }
  if (plan.mode != 1) {
    for (auto& s : submitters) s.join();
  }
  const stop_outcome out = std::move(*rt).stop();
  world.admission.stop_request_returned();
  sim.disarm_stop_requests();
  if (out.is_error()) sim.fail("shutdown_race: stop() from the main thread answered error");
  if (plan.mode == 1) {
    for (auto& s : submitters) s.join();
  }
  for (auto& s : stoppers) s.join();
  rt.reset();
  return out;
}

template <shutdown_race_variant Variant>
void shutdown_race(context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", 4));
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", 100));
  const auto threads = static_cast<std::size_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(2, 4))));
  race_stop_plan stop_plan;
  stop_plan.mode = sim.param("stop_mode", static_cast<std::int64_t>(sim.pick(0, 3)));
  stop_plan.after_submissions = sim.param("stop_after", static_cast<std::int64_t>(sim.pick(0, tasks + tasks / 4)));
  stop_plan.stoppers = sim.param("stoppers", static_cast<std::int64_t>(sim.pick(1, 2)));
  race_world world(sim);
  world.child_percent = sim.param("child_percent", 40);
  world.sleep_percent = sim.param("sleep_percent", 50);
  world.quick_percent = sim.param("quick_percent", 0);
  world.stop_from_task = stop_plan.mode == 3;
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);

  std::optional<runtime> rt;
  if (!start_runtime(sim, runtime::builder().workers(workers).blocking_capacity(2, 2).inbox_capacity(64), rt, "shutdown_race")) return;
  world.ops = rt->operations();
  sim.arm_stop_requests([&world] {
    world.ops.request_stop();
    world.admission.stop_request_returned();
  });

  // 1. Submitters, each its share of the tasks.
  std::vector<std::vector<race_submission>> per_thread(threads);
  std::vector<scheduler> pinned;
  for (std::size_t i = 0; i < workers; ++i) pinned.push_back(rt->worker_scheduler(i));
  std::vector<platform::thread> submitters = start_submitters(
      sim, threads, tasks, rt->scheduler(), pinned, world.submitters_done,
      [&sim, &world, &per_thread](std::size_t t, scheduler& sched, std::vector<scheduler>& pinned_here) {
        submit_planned<Variant>(sim, world, draw_plan(sim, world), sched, pinned_here, per_thread[t]);
        ++world.submissions;
      },
      [] { platform::yield_thread(); });

  // 2. The stop, racing them.
  const stop_outcome out = stop_racing(sim, world, rt, submitters, stop_plan);

  // 3. Every admitted task is finished now; read every outcome.
  std::uint64_t submissions = 0;
  for (auto& list : per_thread) {
    for (auto& [id, h] : list) {
      ++submissions;
      const auto kind = world.ledger.settle(id, h);
      world.admission.ended(id, kind.text, kind.reason);
      if (kind.text == "cancelled") world.stop_report.cancelled_by_stop();  // nothing else aborts here
    }
  }
  world.ledger.check();
  world.admission.check();
  world.stop_report.check(out);
  sim.note("shutdown_race: " + std::to_string(submissions) + " handles, ok=" + std::to_string(world.ledger.count("ok")) +
           " cancelled=" + std::to_string(world.ledger.count("cancelled")) +
           " rejected=" + std::to_string(world.ledger.count("rejected")) +
           " stop=" + (out.is_complete() ? "complete" : "incomplete"));
}

// The knobs shutdown_race reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> shutdown_race_knobs() {
  return {
      {"workers", 1, 64, "runtime workers"},
      {"tasks", 1, 100'000, "tasks submitted"},
      {"threads", 1, 64, "submitting threads"},
      {"stop_mode", 0, 3, "how the stop is requested (3: from a task)"},
      {"stop_after", 0, 125'000, "submissions before the stop request"},
      {"stoppers", 1, 8, "threads requesting the stop at once (stop_mode 0)"},
      {"child_percent", 0, 100, "percent of tasks that spawn a child"},
      {"sleep_percent", 0, 100, "percent of tasks that sleep"},
      {"quick_percent", 0, 100, "percent of tasks that finish without awaiting"},
  };
}

}  // namespace weft::sim::scenarios
