// Built-in scenario idle_wake — submissions from outside into a stealing_pool whose workers keep
// falling idle.
//
// `workers` workers and `threads` submitter threads sharing `tasks` submissions. A submitter
// pauses between submissions, now and then for a virtual millisecond (every worker has long
// parked by then), so submissions land on parked workers, on workers about to park and on busy
// ones, at every step of the park protocol. Half the submissions are joined at once by their
// submitter, so each of those is the last submission for a while: one that no worker noticed
// stays unnoticed. Each task is short (maybe one yield, maybe a child).
// Oracles: tasks.hpp (one outcome each; ok means the body ran once to the end). A submission
// stranded in an injector while every worker sleeps (a lost wake-up) leaves its join waiting
// forever: the run ends in the simulator's deadlock report.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/platform/parker.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/scenario.hpp>

#include "pool_support.hpp"

namespace {

using namespace weft;
namespace oracles = weft::sim::oracles;

struct idle_world {
  explicit idle_world(sim::context& s) : ledger(s) {}
  oracles::task_ledger ledger;
  std::uint64_t next_id = 1;
};

task<std::uint64_t> short_task(idle_world* w, std::uint64_t id, bool yields) {
  w->ledger.started(id, sim::scenarios::this_thread());
  if (yields) {
    co_await yield_now();
    w->ledger.resumed(id, sim::scenarios::this_thread());
  }
  w->ledger.finished(id);
  co_return id;
}

struct submission {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
  bool joined = false;
};

}  // namespace

WEFT_SIM_SCENARIO(idle_wake) (weft::sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto threads = static_cast<std::size_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto tasks = sim.param("tasks", 24);
  const auto pause_max = static_cast<std::uint64_t>(sim.param("pause", 4));

  idle_world world(sim);
  world.ledger.allow_moves(true);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  std::optional<stealing_pool> pool;
  if (!sim::scenarios::start_pool(sim, stealing_pool::builder().workers(workers), pool, "idle_wake")) return;

  std::vector<std::vector<submission>> per_thread(threads);
  std::vector<platform::thread> submitters;
  std::int64_t remaining = tasks;
  for (std::size_t t = 0; t < threads; ++t) {
    submitters.push_back(sim.start_thread([&, t] {
      platform::parker nap;
      while (remaining > 0) {
        --remaining;
        const std::uint64_t id = world.next_id++;
        const bool yields = sim.chance(1, 3);
        const auto p = static_cast<priority>(sim.pick(0, priority_count - 1));
        per_thread[t].push_back(submission{id, pool->spawn(p, [w = &world, id, yields] { return short_task(w, id, yields); })});
        if (sim.chance(1, 2)) {
          // Waits for it at once: this submission is the last one for now, so nothing later would
          // wake a worker that missed it.
          submission& s = per_thread[t].back();
          const auto result = s.handle.join();
          world.ledger.answered(s.id, true);
          world.ledger.outcome(s.id, oracles::task_ledger::kind_of(result));
          s.joined = true;
        }
        if (sim.chance(1, 4)) {
          (void)nap.park_until(platform::clock::now() + std::chrono::milliseconds(1));  // the pool parks meanwhile
        } else {
          for (std::uint64_t k = sim.pick(0, pause_max); k > 0; --k) platform::yield_thread();
        }
      }
    }));
  }
  for (auto& s : submitters) s.join();
  // Each join blocks until its task ran: a submission stranded by a lost wake-up never ends.
  for (auto& list : per_thread) {
    for (auto& s : list) {
      if (s.joined) continue;
      const auto result = s.handle.join();
      world.ledger.answered(s.id, true);
      world.ledger.outcome(s.id, oracles::task_ledger::kind_of(result));
    }
  }
  const weft::pool_stats stats = pool->stats();
  const stop_outcome out = std::move(*pool).stop();
  if (!out.is_complete()) sim.fail("idle_wake: stop() after every task ended answered " + to_string(out));
  pool.reset();
  world.ledger.check();
  sim.note("idle_wake: parks=" + std::to_string(stats.parks) + " wake_notifications=" + std::to_string(stats.wake_notifications));
}
WEFT_SIM_SCENARIO_DOC(idle_wake, "outside submissions into a stealing_pool whose workers keep parking; none is stranded");
WEFT_SIM_SCENARIO_KNOBS(idle_wake, {{"workers", 1, 16, "pool workers"},
                                    {"threads", 1, 16, "submitting threads"},
                                    {"tasks", 1, 100'000, "submissions in all"},
                                    {"pause", 0, 1'000, "most scheduling points a submitter pauses between submissions"}});
