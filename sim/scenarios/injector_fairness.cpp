// Built-in scenario injector_fairness — a pool task that keeps waking itself, and submissions from
// outside the pool at its priority.
//
// One worker (a second would take the submissions from the injector while the first is busy, and
// the bound below would go unused), built with local_burst `burst`. The source task yields
// `yields` times; each yield puts it back in its worker's local queue, where it is the only task,
// so every local pop finds it. The scenario's thread submits `submissions` tasks of the source's
// priority from outside, one at a time (they go to the injector), and joins each.
// Oracle (injector fairness): a submission starts before the source has begun more than
// `burst` + 1 polls since the submission was queued — after `burst` local pops in a row the worker
// looks at the injector first (one more poll may have been under way when the submission landed).
// A worker that takes local work for as long as there is some starts it only after the source's
// last yield. Tasks: tasks.hpp (one outcome each; ok means the body ran once to the end).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/platform/thread.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/sim/scenario.hpp>

#include "pool_support.hpp"

namespace {

using namespace weft;
namespace oracles = weft::sim::oracles;

constexpr std::int64_t burst_max = 64;
constexpr std::int64_t submissions_max = 64;

struct fairness_world {
  explicit fairness_world(sim::context& s) : ledger(s) {}
  oracles::task_ledger ledger;
  std::int64_t source_polls = 0;  // polls of the source begun so far (the simulator runs one fiber at a time)
};

task<void> self_waking_source(fairness_world* w, std::uint64_t id, std::int64_t yields) {
  w->ledger.started(id, sim::scenarios::this_thread());
  ++w->source_polls;
  for (std::int64_t i = 0; i < yields; ++i) {
    co_await yield_now();
    ++w->source_polls;
    w->ledger.resumed(id, sim::scenarios::this_thread());
  }
  w->ledger.finished(id);
}

task<void> submitted(fairness_world* w, std::uint64_t id, std::optional<std::int64_t>* started_at) {
  *started_at = w->source_polls;
  w->ledger.started(id, sim::scenarios::this_thread());
  w->ledger.finished(id);
  co_return;
}

}  // namespace

WEFT_SIM_SCENARIO(injector_fairness) (weft::sim::context& sim) {
  const auto burst = sim.param("burst", static_cast<std::int64_t>(sim.pick(1, 16)));
  const auto yields = sim.param("yields", 1'000);
  const auto submissions = sim.param("submissions", static_cast<std::int64_t>(sim.pick(1, 4)));
  const auto level = static_cast<priority>(sim.pick(0, priority_count - 1));

  fairness_world world(sim);
  world.ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);
  std::optional<stealing_pool> pool;
  if (!sim::scenarios::start_pool(
          sim, stealing_pool::builder().workers(1).local_burst(static_cast<std::uint32_t>(burst)), pool,
          "injector_fairness")) {
    return;
  }
  const std::uint64_t source_id = 0;
  join_handle<void> source = pool->spawn(level, [w = &world, yields] { return self_waking_source(w, source_id, yields); });
  // Its first poll, or its end (refused, or ended by a fault): a source never run is a livelock.
  while (world.source_polls == 0 && !source.is_finished()) platform::yield_thread();

  for (std::int64_t s = 1; s <= submissions; ++s) {
    const auto id = static_cast<std::uint64_t>(s);
    std::optional<std::int64_t> started_at;
    join_handle<void> h = pool->spawn(level, [w = &world, id, at = &started_at] { return submitted(w, id, at); });
    const std::int64_t queued_at = world.source_polls;  // the submission is in the injector (or taken)
    const auto result = h.join();
    world.ledger.answered(id, true);
    world.ledger.outcome(id, oracles::task_ledger::kind_of(result));
    if (started_at && *started_at - queued_at > burst + 1) {
      sim.fail("injector fairness oracle: submission " + std::to_string(id) + " from outside started after " +
               std::to_string(*started_at - queued_at) + " polls of a self-waking task of its priority (local_burst " +
               std::to_string(burst) + " allows " + std::to_string(burst + 1) + ")");
    }
  }
  const auto ended = source.join();
  world.ledger.answered(source_id, true);
  world.ledger.outcome(source_id, oracles::task_ledger::kind_of(ended));
  const stop_outcome out = std::move(*pool).stop();
  if (!out.is_complete()) sim.fail("injector_fairness: stop() after every task ended answered " + to_string(out));
  pool.reset();
  world.ledger.check();
  sim.note("injector_fairness: source polls " + std::to_string(world.source_polls));
}
WEFT_SIM_SCENARIO_DOC(injector_fairness,
                      "a pool task that keeps waking itself; submissions from outside at its priority start within "
                      "local_burst of its polls");
WEFT_SIM_SCENARIO_KNOBS(injector_fairness, {{"burst", 1, burst_max, "the pool's local_burst"},
                                            {"yields", 0, 100'000, "yields of the self-waking task"},
                                            {"submissions", 1, submissions_max, "tasks submitted from outside, one at a time"}});
