// Built-in scenario drain_race — submissions from several threads racing runtime::drain().
//
// A runtime of `workers` workers. `threads` submitter threads share `tasks` submissions (spawn,
// spawn_anywhere, a worker's scheduler, spawn_everywhere or spawn_blocking), pausing a seeded
// number of scheduling points between them; task bodies are short (a yield, maybe a virtual-time
// sleep) so the runtime keeps falling idle between submissions. After `drain_after` submissions
// the main thread calls drain() (with a deadline of `deadline_ms`, or none when it is 0); the
// submitters keep going, then the runtime is stopped and every handle read. A seed runs
// `rounds` such runtimes one after another.
//
// Oracles: drain.hpp (`drained` means every admitted task's body has finished), admission.hpp
// (a submission made after drain() or stop() returned, or after its submitter saw
// stop_requested(), is refused `closed`), tasks.hpp (one terminal outcome each, nothing refused
// runs, nothing stranded, no poll after completion, no change of worker), timers.hpp.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/admission.hpp>
#include <weft/sim/oracles/drain.hpp>
#include <weft/sim/oracles/stop_report.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/time.hpp>

#include "runtime_submitters.hpp"

namespace {

using namespace weft;
namespace oracles = weft::sim::oracles;

struct drain_world {
  explicit drain_world(sim::context& s) : ledger(s), admission(s), drain(s), stop_report(s), timers(s) {}
  oracles::task_ledger ledger;
  oracles::admission_ledger admission;
  oracles::drain_ledger drain;
  oracles::stop_report_ledger stop_report;
  oracles::timer_ledger timers;
  runtime_operations ops;
  std::uint64_t next_id = 1;
  std::uint64_t next_timer = 1;
  std::uint64_t submissions = 0;
  std::uint64_t submitters_done = 0;
};

// The most scheduling points the main thread waits for `drain_after` submissions before it drains.
constexpr std::uint64_t drain_wait_spins_max = 2'000;

std::uint64_t this_thread() noexcept { return platform::current_thread_id(); }

// The body's end, by return or by an injected exception: the drain oracle's "finished".
struct body_end {
  drain_world* w;
  std::uint64_t id;
  ~body_end() { w->drain.body_ended(id); }
};

// plan bit 0: yield once; bit 1: sleep 1-2 virtual ms.
task<std::uint64_t> drain_task(drain_world* w, std::uint64_t id, std::uint32_t plan) {
  w->ledger.started(id, this_thread());
  std::optional<body_end> end;
  end.emplace(body_end{w, id});
  if ((plan & 0x1u) != 0) {
    co_await yield_now();
    w->ledger.resumed(id, this_thread());
  }
  if ((plan & 0x2u) != 0) {
    const std::uint64_t timer = w->next_timer++;
    const instant deadline = platform::clock::now() + std::chrono::milliseconds(1 + (plan >> 8) % 2);
    w->timers.armed(timer, deadline);
    co_await sleep_until(deadline);
    w->timers.fired(timer, platform::clock::now());
    w->ledger.resumed(id, this_thread());
  }
  w->ledger.finished(id);
  end.reset();
  co_return id;
}

struct drain_submission {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

void submit_one(sim::context& sim, drain_world& world, scheduler& sched, std::vector<scheduler>& pinned,
                std::vector<drain_submission>& out) {
  // A sleep holds the runtime busy until virtual time moves, which it does only once every
  // submitter waits: rare sleeps let it fall idle between submissions, where drains race.
  auto plan = static_cast<std::uint32_t>(sim.random().next() & 0xff01u);
  if (sim.chance(1, 8)) plan |= 0x2u;
  // What the submitter knows just before the call (the admission oracle).
  const auto seen = world.admission.before_submission(world.ops.stop_requested());
  sim::scenarios::submit_one_way(
      sim, sim.pick(0, sim::scenarios::submit_ways_max), world.next_id, sched, pinned,
      [w = &world, plan](std::uint64_t id) { return drain_task(w, id, plan); },
      [&world](std::uint64_t id) {
        world.ledger.mark_blocking(id);
        return [w = &world, id] {
          w->ledger.started(id, this_thread());
          platform::yield_thread();
          w->ledger.finished(id);
          w->drain.body_ended(id);
          return id;
        };
      },
      [&](std::uint64_t id, join_handle<std::uint64_t> h) {
        world.admission.submitting(id, seen);
        out.push_back(drain_submission{id, std::move(h)});
      });
}

// One round: a runtime, its submitters, the drain, the stop, and every oracle's verdict.
void drain_round(sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 4))));
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", 40));
  const auto threads = static_cast<std::size_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(1, 3))));
  // Half the seeds drain almost at once, while the runtime is still idle between the first
  // submissions: a drain that finds it idle returns with submitters mid-flight.
  const std::uint64_t drain_draw = sim.chance(1, 2) ? sim.pick(0, 2) : sim.pick(0, tasks);
  const auto drain_after = static_cast<std::uint64_t>(sim.param("drain_after", static_cast<std::int64_t>(drain_draw)));
  const auto deadline_ms = sim.param("deadline_ms", static_cast<std::int64_t>(sim.pick(0, 3)));
  const auto pause_max = static_cast<std::uint64_t>(sim.param("pause", 3));

  drain_world world(sim);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  std::optional<runtime> rt;
  if (!sim::scenarios::start_runtime(sim, runtime::builder().workers(workers).blocking_capacity(1, 1).inbox_capacity(64), rt, "drain_race")) return;
  world.ops = rt->operations();

  std::vector<std::vector<drain_submission>> per_thread(threads);
  std::vector<scheduler> pinned;
  for (std::size_t i = 0; i < workers; ++i) pinned.push_back(rt->worker_scheduler(i));
  std::vector<platform::thread> submitters = sim::scenarios::start_submitters(
      sim, threads, tasks, rt->scheduler(), pinned, world.submitters_done,
      [&sim, &world, &per_thread](std::size_t t, scheduler& sched, std::vector<scheduler>& pinned_here) {
        submit_one(sim, world, sched, pinned_here, per_thread[t]);
        ++world.submissions;
      },
      [&sim, pause_max] {
        for (std::uint64_t p = sim.pick(0, pause_max); p > 0; --p) platform::yield_thread();
      });

  // The drain, racing the submitters.
  // Bounded: under PCT a spinning main thread of top priority would starve the submitters.
  for (std::uint64_t spins = 0; spins < drain_wait_spins_max && world.submissions < drain_after &&
                                world.submitters_done < threads;
       ++spins) {
    platform::yield_thread();
  }
  std::optional<duration> deadline;
  if (deadline_ms > 0) deadline = std::chrono::milliseconds(deadline_ms);
  const instant began = platform::clock::now();
  const drain_outcome d = rt->drain(deadline);
  world.drain.returned(d, began, deadline, platform::clock::now());
  if (d == drain_outcome::drained) {
    world.drain.drained();
    // Every handle made so far must say finished: a refused one is finished at once, and an
    // admitted one was counted, so drain() waited for its completion. By index: is_finished()
    // is a scheduling point, and submitters append meanwhile (their new handles are refused).
    for (auto& list : per_thread) {
      const std::size_t made = list.size();
      for (std::size_t i = 0; i < made; ++i) {
        if (!list[i].handle.is_finished()) world.drain.unfinished_handle(list[i].id);
      }
    }
  }
  world.admission.drain_returned();
  sim.note(std::string("drain_race: drain answered ") + to_string(d));

  for (auto& s : submitters) s.join();
  const stop_outcome out = std::move(*rt).stop();
  world.admission.stop_request_returned();
  if (out.is_error()) sim.fail("drain_race: stop() from the main thread answered error");
  rt.reset();

  for (auto& list : per_thread) {
    for (auto& [id, h] : list) {
      const auto kind = world.ledger.settle(id, h);
      world.admission.ended(id, kind.text, kind.reason);
      world.drain.ended(id, kind.text);
      if (kind.text == "cancelled") world.stop_report.cancelled_by_stop();  // nothing here aborts
    }
  }
  world.stop_report.check(out);
  // After `drained` nothing is left to cut short: admission is closed and every task finished.
  if (d == drain_outcome::drained && !out.is_complete()) {
    sim.fail("stop-report oracle: drain() answered drained, yet the stop that followed answered " + to_string(out));
  }
  world.ledger.check();
  world.admission.check();
  world.drain.check();
  sim.note("drain_race: ok=" + std::to_string(world.ledger.count("ok")) +
           " rejected=" + std::to_string(world.ledger.count("rejected")) +
           " judged after drain=" + std::to_string(world.drain.checked()));
}

}  // namespace

// Several rounds a seed: each drain races its runtime's last finisher once, and a lost wake-up
// in the drain's wait needs the finisher at one exact step of it.
WEFT_SIM_SCENARIO(drain_race) (weft::sim::context& sim) {
  const auto rounds = sim.param("rounds", static_cast<std::int64_t>(sim.pick(1, 3)));
  for (std::int64_t r = 0; r < rounds; ++r) drain_round(sim);
}
WEFT_SIM_SCENARIO_DOC(drain_race, "submitters race runtime::drain(); drained means every admitted task finished");
WEFT_SIM_SCENARIO_KNOBS(drain_race, {{"workers", 1, 64, "runtime workers"},
                                     {"tasks", 1, 100'000, "submissions in all"},
                                     {"threads", 1, 64, "submitting threads"},
                                     {"drain_after", 0, 100'000, "submissions before drain() is called"},
                                     {"deadline_ms", 0, 60'000, "drain deadline in virtual ms (0: none)"},
                                     {"pause", 0, 1'000, "most scheduling points a submitter pauses between submissions"},
                                     {"rounds", 1, 64, "runtimes drained one after another"}});
