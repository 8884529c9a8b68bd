// Built-in scenario priority_fairness — a stealing_pool with all three priorities saturated.
//
// `workers` workers, weights high:normal:background = 8:4:`background_weight`. Each level gets
// `tasks` tasks that each yield `yields` times. Every task first waits on one gate, opened once
// all are spawned, so all levels compete from the first counted poll (the oracle counts from the
// moment the gate's open() returned, when every task is queued). Each resume (one that throws an
// injected fault too) is reported to the priority-share oracle with its level
// (priority_share.hpp: while every level had work queued, each got at least half its weighted
// share of the polls), and each task to the task oracle (one outcome each, ok means its body ran
// once to the end; tasks may move between workers).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/sim/oracles/priority_share.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/scenario.hpp>

#include "pool_support.hpp"

namespace {

using namespace weft;
namespace oracles = weft::sim::oracles;

struct fairness_world {
  fairness_world(sim::context& s, std::array<std::uint32_t, priority_count> weights, std::uint64_t workers)
      : ledger(s), share(s, weights, workers) {}
  oracles::task_ledger ledger;
  oracles::priority_share_ledger share;
  sim::scenarios::broadcast_gate start;
  stealing_pool* pool = nullptr;
  std::array<std::uint64_t, priority_count> left{};  // tasks of each level not yet ended
};

// The level runs out of tasks when its last one ends, by return or by an injected exception.
struct level_count {
  fairness_world* w;
  priority p;
  ~level_count() {
    if (--w->left[index_of(p)] == 0) w->share.level_done(p);
  }
};

// Whether every level has work, as seen by a poll at level `self`: its own task is that level's
// work, and every other level needs a task waiting in a queue (the pool's approximate stats, exact
// here: the simulator runs one fiber at a time).
bool every_level_queued(const fairness_world* w, priority self) {
  const pool_stats s = w->pool->stats();
  for (std::size_t p = 0; p < priority_count; ++p) {
    if (p != index_of(self) && s.runnable_local[p] + s.runnable_injector[p] == 0) return false;
  }
  return true;
}

// Each poll is reported with its level. A poll whose await throws an injected fault
// (task_exception) was an opportunity the level got all the same: it is reported as the
// exception leaves the body (only the awaits throw).
task<void> saturating_task(fairness_world* w, std::uint64_t id, priority p, std::int64_t yields) {
  w->ledger.started(id, sim::scenarios::this_thread());
  const level_count counted{w, p};
  const auto report = [w, p] { w->share.polled(p, every_level_queued(w, p)); };
  try {
    co_await w->start.wait();
    for (std::int64_t i = 0; i < yields; ++i) {
      report();
      co_await yield_now();
      w->ledger.resumed(id, sim::scenarios::this_thread());
    }
    report();
  } catch (...) {
    report();  // the poll whose await threw
    throw;
  }
  w->ledger.finished(id);
}

}  // namespace

WEFT_SIM_SCENARIO(priority_fairness) (weft::sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 2))));
  const auto tasks = sim.param("tasks", 6);
  const auto yields = sim.param("yields", 20);
  const auto background_weight = static_cast<std::uint32_t>(sim.param("background_weight", 1));
  const std::array<std::uint32_t, priority_count> weights{8, 4, background_weight};

  fairness_world world(sim, weights, workers);
  world.ledger.allow_moves(true);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  std::optional<stealing_pool> pool;
  if (!sim::scenarios::start_pool(sim, stealing_pool::builder().workers(workers).weights({weights[0], weights[1], weights[2]}),
                                  pool, "priority_fairness")) {
    return;
  }
  world.pool = &*pool;
  struct spawned {
    std::uint64_t id;
    join_handle<void> handle;
  };
  std::vector<spawned> handles;
  // Spawn order interleaves the levels by seed; ids count from 1.
  std::array<std::int64_t, priority_count> to_spawn{tasks, tasks, tasks};
  std::uint64_t next_id = 1;
  while (to_spawn[0] + to_spawn[1] + to_spawn[2] > 0) {
    std::size_t level = sim.pick(0, priority_count - 1);
    while (to_spawn[level] == 0) level = (level + 1) % priority_count;
    --to_spawn[level];
    const auto p = static_cast<priority>(level);
    const std::uint64_t id = next_id++;
    ++world.left[level];
    join_handle<void> h = pool->spawn(p, [w = &world, id, p, yields] { return saturating_task(w, id, p, yields); });
    handles.push_back(spawned{id, std::move(h)});
  }
  world.start.open();  // every task is queued once this returns
  world.share.open_window();
  if (pool->drain() != drain_outcome::drained) sim.fail("priority_fairness: drain() without a deadline timed out");
  for (auto& s : handles) world.ledger.settle(s.id, s.handle);  // drained: each is finished
  const stop_outcome out = std::move(*pool).stop();
  if (!out.is_complete()) sim.fail("priority_fairness: stop() after every task ended answered " + to_string(out));
  pool.reset();
  world.share.check();
  world.ledger.check();
  sim.note("priority_fairness: window " + std::to_string(world.share.window()) + " polls");
}
WEFT_SIM_SCENARIO_DOC(priority_fairness, "all three priorities saturated in a stealing_pool; each gets its weighted share");
WEFT_SIM_SCENARIO_KNOBS(priority_fairness, {{"workers", 1, 16, "pool workers"},
                                            {"tasks", 1, 1'000, "tasks per priority"},
                                            {"yields", 0, 10'000, "yields per task"},
                                            {"background_weight", 1, 8, "the background weight (high 8, normal 4)"}});
