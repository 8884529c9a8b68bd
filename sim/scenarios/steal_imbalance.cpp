// Built-in scenario steal_imbalance — all the work of a stealing_pool starts on one worker.
//
// `workers` workers. One parent task, spawned from outside, spawns `children` children from its
// worker: they all land in that worker's local queue (which overflows to the injector past its
// capacity), so the other workers get work only by stealing it or by taking the overflow. Each
// child yields `yields` times and, one in `nest_one_in`, spawns and awaits a grandchild of its own.
// Oracles: tasks.hpp (every task, children and grandchildren, ends exactly once; ok means its body
// ran exactly once to the end; tasks may move between workers). A task lost between queues leaves
// its parent's join waiting forever: the run ends in the simulator's deadlock report.
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

struct imbalance_world {
  explicit imbalance_world(sim::context& s) : ledger(s) {}
  oracles::task_ledger ledger;
  stealing_pool* pool = nullptr;
  std::uint64_t next_id = 1;
  std::uint64_t seed_bits = 0;
};

task<std::uint64_t> leaf_task(imbalance_world* w, std::uint64_t id) {
  w->ledger.started(id, sim::scenarios::this_thread());
  co_await yield_now();
  w->ledger.resumed(id, sim::scenarios::this_thread());
  w->ledger.finished(id);
  co_return id;
}

task<std::uint64_t> child_task(imbalance_world* w, std::uint64_t id, std::int64_t yields, bool nest) {
  w->ledger.started(id, sim::scenarios::this_thread());
  for (std::int64_t i = 0; i < yields; ++i) {
    co_await yield_now();
    w->ledger.resumed(id, sim::scenarios::this_thread());
  }
  if (nest) {
    const std::uint64_t gid = w->next_id++;
    join_handle<std::uint64_t> g = w->pool->spawn(priority::normal, [w, gid] { return leaf_task(w, gid); });
    oracles::task_ledger::awaiting guard{&w->ledger, gid};
    auto r = co_await g;
    guard.settled = true;
    const auto kind = oracles::task_ledger::kind_of(r);
    w->ledger.answered(gid, kind.text != "rejected");
    w->ledger.outcome(gid, kind);
    w->ledger.resumed(id, sim::scenarios::this_thread());
  }
  w->ledger.finished(id);
  co_return id;
}

struct child_handle {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
};

task<std::uint64_t> parent_task(imbalance_world* w, std::uint64_t id, std::int64_t children, std::int64_t yields,
                                std::int64_t nest_one_in, std::vector<child_handle>* out) {
  w->ledger.started(id, sim::scenarios::this_thread());
  for (std::int64_t i = 0; i < children; ++i) {
    const std::uint64_t cid = w->next_id++;
    // Nesting is decided here, from the seed's bits, so every child's plan is fixed by the seed.
    const bool nest = nest_one_in > 0 && ((w->seed_bits >> (i % 64)) & 1u) != 0 && i % nest_one_in == 0;
    out->push_back(child_handle{cid, w->pool->spawn(priority::normal, [w, cid, yields, nest] {
                                  return child_task(w, cid, yields, nest);
                                })});
  }
  w->ledger.finished(id);
  co_return id;
}

}  // namespace

WEFT_SIM_SCENARIO(steal_imbalance) (weft::sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(2, 3))));
  const auto children = sim.param("children", static_cast<std::int64_t>(sim.chance(1, 4) ? sim.pick(257, 400) : sim.pick(8, 64)));
  const auto yields = sim.param("yields", static_cast<std::int64_t>(sim.pick(0, 3)));
  const auto nest_one_in = sim.param("nest_one_in", 4);

  imbalance_world world(sim);
  world.ledger.allow_moves(true);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  world.seed_bits = sim.random().next();
  std::optional<stealing_pool> pool;
  if (!sim::scenarios::start_pool(sim, stealing_pool::builder().workers(workers), pool, "steal_imbalance")) return;
  world.pool = &*pool;

  std::vector<child_handle> kids;
  const std::uint64_t parent_id = world.next_id++;
  join_handle<std::uint64_t> parent = pool->spawn(priority::normal, [&world, parent_id, children, yields, nest_one_in, &kids] {
    return parent_task(&world, parent_id, children, yields, nest_one_in, &kids);
  });
  // The parent's join: once it answers, every child is spawned (or was refused).
  const auto parent_result = parent.join();
  world.ledger.answered(parent_id, true);
  world.ledger.outcome(parent_id, oracles::task_ledger::kind_of(parent_result));
  // Joins, not a drain: a drain would refuse the grandchildren spawned meanwhile.
  for (auto& k : kids) {
    const auto result = k.handle.join();
    world.ledger.answered(k.id, true);
    world.ledger.outcome(k.id, oracles::task_ledger::kind_of(result));
  }
  const weft::pool_stats stats = pool->stats();
  const stop_outcome out = std::move(*pool).stop();
  if (!out.is_complete()) sim.fail("steal_imbalance: stop() after every task ended answered " + to_string(out));
  pool.reset();
  world.ledger.check();
  sim.note("steal_imbalance: steals=" + std::to_string(stats.steals) + " stolen=" + std::to_string(stats.stolen_tasks) +
           " injector_batches=" + std::to_string(stats.injector_batches));
}
WEFT_SIM_SCENARIO_DOC(steal_imbalance, "all of a stealing_pool's work starts on one worker; every task runs exactly once");
WEFT_SIM_SCENARIO_KNOBS(steal_imbalance, {{"workers", 1, 16, "pool workers"},
                                          {"children", 1, 100'000, "children the parent spawns from its worker"},
                                          {"yields", 0, 1'000, "yields per child"},
                                          {"nest_one_in", 0, 1'000, "every n-th child may spawn a grandchild (0: none)"}});
