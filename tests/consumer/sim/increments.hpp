// increments.hpp — a user's code under simulation: two tasks on a two-worker runtime each add one
// to a counter. With `split` each increment is a read and a write with a suspension between them
// (the planted bug): an increment is lost whenever the other task's read lands in that window.
// Shared by the consumer programs and weft's own tests of the check API.
#pragma once

#include <atomic>
#include <memory>

#include <weft/sim/context.hpp>
#include <weft/weft.hpp>

inline void increment_twice(weft::sim::context& sim, bool split) {
  auto counter = std::make_shared<std::atomic<int>>(0);
  auto rt = weft::runtime::builder().workers(2).build();
  auto bump = [counter, split]() -> weft::task<void> {
    if (!split) {
      counter->fetch_add(1);
      co_return;
    }
    const int seen = counter->load();
    co_await weft::yield_now();
    counter->store(seen + 1);
  };
  auto a = rt.scheduler().spawn_anywhere(bump);
  auto b = rt.scheduler().spawn_anywhere(bump);
  if (!a.join() || !b.join()) sim.fail("a task did not finish");
  if (counter->load() != 2) sim.fail("an increment was lost");
  if (!std::move(rt).stop().is_complete()) sim.fail("the runtime had work left at stop");
}
