// racy_counter.cpp — a user's scenario with a planted bug, for the installed-library check: two
// tasks each read a shared counter, yield, and write back what they read plus one. Whenever the
// second read lands between the first task's read and its write an increment is lost, and the
// simulator must find such a seed and replay it.
#include <atomic>
#include <memory>

#include <weft/sim/context.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/weft.hpp>

WEFT_SIM_SCENARIO(racy_counter)(weft::sim::context& sim) {
  auto counter = std::make_shared<std::atomic<int>>(0);
  auto rt = weft::runtime::builder().workers(2).build();
  auto bump = [counter]() -> weft::task<void> {
    const int seen = counter->load();
    co_await weft::yield_now();
    counter->store(seen + 1);  // the bug: a read-modify-write split by a suspension
  };
  auto a = rt.scheduler().spawn_anywhere(bump);
  auto b = rt.scheduler().spawn_anywhere(bump);
  if (!a.join() || !b.join()) sim.fail("a task did not finish");
  if (counter->load() != 2) sim.fail("an increment was lost");
  if (!std::move(rt).stop().is_complete()) sim.fail("the runtime had work left at stop");
}
WEFT_SIM_SCENARIO_DOC(racy_counter, "two tasks increment a counter across a suspension (planted bug)");
