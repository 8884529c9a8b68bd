// Built-in scenario pool_shutdown — submissions racing a stealing_pool's stop, drain or graceful
// stop.
//
// `workers` workers; `threads` submitter threads share `tasks` spawns of every priority. A task
// either returns at once, yields a few times, spawns and awaits a child, or waits on a gate that
// an opener thread opens at a seeded point (or never). After `stop_after` spawns the main thread
// ends the pool by the seed's choice: stop() (cancel everything), drain() then stop(), or
// stop_graceful() with a virtual-time deadline; the submitters keep spawning meanwhile.
// Oracles:
//   * tasks.hpp: every spawn ends exactly once; nothing rejected runs; nothing cancelled ran to
//     its end; after the stop every accepted handle is finished (none stranded);
//   * admission: a spawn made after its submitter saw stop_requested() is rejected;
//   * drain completeness: drain() answering `drained` means every handle made before it finished,
//     and the stop after it then has nothing to cancel (`complete`);
//   * stop report: no task ends `cancelled` unless the stop reported tasks_cancelled, and never
//     more of them than it reported.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/scenario.hpp>

#include "pool_support.hpp"

namespace {

using namespace weft;
namespace oracles = weft::sim::oracles;

struct shutdown_world {
  explicit shutdown_world(sim::context& s) : ledger(s) {}
  oracles::task_ledger ledger;
  sim::scenarios::broadcast_gate gate;
  stealing_pool* pool = nullptr;
  std::uint64_t next_id = 1;
  std::uint64_t spawned = 0;
};

task<std::uint64_t> child_task(shutdown_world* w, std::uint64_t id) {
  w->ledger.started(id, sim::scenarios::this_thread());
  w->ledger.finished(id);
  co_return id;
}

// plan 0: return at once; 1: yield 1-3 times; 2: spawn and await a child; 3: wait on the gate.
task<std::uint64_t> plan_task(shutdown_world* w, std::uint64_t id, std::uint64_t plan, std::uint64_t yields) {
  w->ledger.started(id, sim::scenarios::this_thread());
  if (plan == 1) {
    for (std::uint64_t i = 0; i < yields; ++i) {
      co_await yield_now();
      w->ledger.resumed(id, sim::scenarios::this_thread());
    }
  } else if (plan == 2) {
    const std::uint64_t cid = w->next_id++;
    join_handle<std::uint64_t> child = w->pool->spawn(priority::background, [w, cid] { return child_task(w, cid); });
    oracles::task_ledger::awaiting guard{&w->ledger, cid};
    auto r = co_await child;
    guard.settled = true;
    const auto kind = oracles::task_ledger::kind_of(r);
    w->ledger.answered(cid, kind.text != "rejected");
    w->ledger.outcome(cid, kind);
    w->ledger.resumed(id, sim::scenarios::this_thread());
  } else if (plan == 3) {
    co_await w->gate.wait();
    w->ledger.resumed(id, sim::scenarios::this_thread());
  }
  w->ledger.finished(id);
  co_return id;
}

struct submission {
  std::uint64_t id;
  bool after_stop_seen;
  join_handle<std::uint64_t> handle;
};

enum class ending { stop, drain_then_stop, stop_graceful };

}  // namespace

WEFT_SIM_SCENARIO(pool_shutdown) (weft::sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto threads = static_cast<std::size_t>(sim.param("threads", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto tasks = sim.param("tasks", 30);
  const auto stop_after = static_cast<std::uint64_t>(sim.param("stop_after", static_cast<std::int64_t>(sim.pick(0, 30))));
  const auto how = static_cast<ending>(sim.param("ending", static_cast<std::int64_t>(sim.pick(0, 2))));
  const auto deadline_ms = sim.param("deadline_ms", static_cast<std::int64_t>(sim.pick(0, 2)));

  shutdown_world world(sim);
  world.ledger.allow_moves(true);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  std::optional<stealing_pool> pool;
  if (!sim::scenarios::start_pool(sim, stealing_pool::builder().workers(workers), pool, "pool_shutdown")) return;
  world.pool = &*pool;

  std::vector<std::vector<submission>> per_thread(threads);
  std::vector<platform::thread> helpers;
  std::int64_t remaining = tasks;
  for (std::size_t t = 0; t < threads; ++t) {
    helpers.push_back(sim.start_thread([&, t] {
      while (remaining > 0) {
        --remaining;
        const std::uint64_t id = world.next_id++;
        const std::uint64_t plan = sim.pick(0, 3);
        const std::uint64_t yields = sim.pick(1, 3);
        const auto p = static_cast<priority>(sim.pick(0, priority_count - 1));
        const bool stop_seen = pool->stop_requested();  // what the submitter knows before the call
        per_thread[t].push_back(submission{
            id, stop_seen, pool->spawn(p, [w = &world, id, plan, yields] { return plan_task(w, id, plan, yields); })});
        ++world.spawned;
        for (std::uint64_t k = sim.pick(0, 2); k > 0; --k) platform::yield_thread();
      }
    }));
  }
  // The opener: opens the gate at a seeded point, or (one seed in three) never.
  const bool opens = !sim.chance(1, 3);
  const std::uint64_t open_after = sim.pick(0, 40);
  helpers.push_back(sim.start_thread([&] {
    if (!opens) return;
    for (std::uint64_t k = 0; k < open_after; ++k) platform::yield_thread();
    world.gate.open();
  }));

  for (std::uint64_t spins = 0; spins < 2'000 && world.spawned < stop_after && remaining > 0; ++spins) {
    platform::yield_thread();
  }
  std::optional<duration> deadline;
  if (deadline_ms > 0) deadline = std::chrono::milliseconds(deadline_ms);
  std::optional<drain_outcome> drained;
  stop_outcome out = stop_outcome::make_complete();
  // Handles made before the drain returned, per thread: the drain-completeness oracle's set.
  std::vector<std::size_t> made_before(threads, 0);
  // A gate that never opens holds its tasks until cancelled: a drain must then have a deadline.
  if (!opens && !deadline) deadline = std::chrono::milliseconds(1);
  switch (how) {
    case ending::stop:
      out = std::move(*pool).stop();
      break;
    case ending::drain_then_stop:
      drained = pool->drain(opens ? std::nullopt : deadline);
      if (*drained == drain_outcome::drained) {
        for (std::size_t t = 0; t < threads; ++t) made_before[t] = per_thread[t].size();
        for (std::size_t t = 0; t < threads; ++t) {
          for (std::size_t i = 0; i < made_before[t]; ++i) {
            if (!per_thread[t][i].handle.is_finished()) {
              sim.fail("drain oracle: drain() answered drained, but task " + std::to_string(per_thread[t][i].id) +
                       " is unfinished");
            }
          }
        }
      }
      out = std::move(*pool).stop();
      break;
    case ending::stop_graceful:
      out = std::move(*pool).stop_graceful(deadline);
      break;
  }
  sim.note(std::string("pool_shutdown: ") + (drained ? std::string("drain ") + to_string(*drained) + ", " : "") +
           "stop " + to_string(out));
  if (out.is_error()) sim.fail("pool_shutdown: stop() from the main thread answered error");
  if (drained == drain_outcome::drained && !out.is_complete()) {
    sim.fail("stop-report oracle: drain() answered drained, yet the stop after it answered " + to_string(out));
  }
  world.gate.open();  // lets a still-running submitter's tasks end (all are cancelled or rejected by now)
  for (auto& h : helpers) h.join();

  std::uint64_t cancelled = 0;
  for (auto& list : per_thread) {
    for (auto& s : list) {
      const auto kind = world.ledger.settle(s.id, s.handle);
      if (kind.text == "cancelled") ++cancelled;
      if (s.after_stop_seen && kind.text != "rejected") {
        sim.fail("admission oracle: task " + std::to_string(s.id) + " was spawned after its submitter saw "
                 "stop_requested(), yet it ended '" + kind.text + "', not rejected");
      }
    }
  }
  if (cancelled > out.counts().tasks_cancelled) {
    sim.fail("stop-report oracle: " + std::to_string(cancelled) + " spawned tasks ended cancelled, but the stop reported " +
             to_string(out));
  }
  pool.reset();
  world.ledger.check();
}
WEFT_SIM_SCENARIO_DOC(pool_shutdown, "spawns racing a stealing_pool's stop, drain or graceful stop");
WEFT_SIM_SCENARIO_KNOBS(pool_shutdown, {{"workers", 1, 16, "pool workers"},
                                        {"threads", 1, 16, "submitting threads"},
                                        {"tasks", 1, 100'000, "spawns in all"},
                                        {"stop_after", 0, 100'000, "spawns before the pool is ended"},
                                        {"ending", 0, 2, "0 stop(), 1 drain() then stop(), 2 stop_graceful()"},
                                        {"deadline_ms", 0, 60'000, "stop_graceful's deadline in virtual ms (0: none)"}});
