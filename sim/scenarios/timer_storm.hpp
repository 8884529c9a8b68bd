// timer_storm — many sleeps, timeouts, loop timers and intervals on one loop, plus a remote
// thread that arms loop timers through macrotasks.
//
// Oracle (timers.hpp): no timer fires before its deadline in virtual time, and every armed timer
// settles (fires or is cancelled) exactly once. Virtual time only moves when every fiber is
// blocked, so long sleeps cost no wall time.
//
// Variant `early` (test-only, proves the oracle can fail): the sleeps and loop timers are armed
// one millisecond short of the deadline the oracle is told about.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

namespace weft::sim::scenarios {

enum class timer_storm_variant { correct, early };

template <timer_storm_variant Variant>
void timer_storm(context& sim) {
  using namespace std::chrono_literals;
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(4, 16))));
  const auto remote = static_cast<std::size_t>(sim.param("remote", static_cast<std::int64_t>(sim.pick(0, 6))));
  // What the broken variant does to a deadline (the oracle is told the true one).
  auto armed_for = [](instant now, instant deadline) {
    if constexpr (Variant == timer_storm_variant::early) {
      return std::max(now, deadline - 1ms);
    } else {
      (void)now;
      return deadline;
    }
  };
  auto random_delay = [&sim] {
    return duration(std::chrono::milliseconds(sim.pick(0, 50)) + std::chrono::microseconds(sim.pick(0, 999)));
  };

  oracles::timer_ledger timers(sim);
  // With the task_exception fault on (e.g. --swarm), any await may throw: a task that ends
  // panicked is allowed, and the timers it had armed but not seen settle count as cancelled.
  const bool panics_injected = sim.fault_enabled(platform::fault::task_exception);
  constexpr std::uint64_t ids_per_task = 8;  // timer ids reserved per task (an interval uses 2 + ticks)
  event_loop loop;
  std::uint64_t next_id = 0;  // loop thread only

  thread_handle handle = loop.handle();
  std::vector<duration> remote_delays;
  for (std::size_t k = 0; k < remote; ++k) remote_delays.push_back(random_delay());
  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  threads.push_back(sim.start_thread([&] {
    sim.name_thread("remote");
    for (std::size_t k = 0; k < remote_delays.size(); ++k) {
      platform::yield_thread();
      const std::uint64_t id = 1'000'000 + k;
      const duration d = remote_delays[k];
      (void)handle.queue_macrotask([&, id, d] {
        const instant now = platform::clock::now();
        timers.armed(id, now + d);
        loop.set_timeout(armed_for(now, now + d) - now, [&, id] { timers.fired(id, platform::clock::now()); });
      });
    }
  }));

  loop.block_on([&]() -> task<void> {
    std::vector<join_handle<void>> handles;
    std::vector<std::uint64_t> first_ids;
    for (std::size_t i = 0; i < tasks; ++i) {
      const std::uint64_t kind = sim.pick(0, 3);
      const duration d1 = random_delay();
      const duration d2 = random_delay();
      const std::uint64_t ticks = sim.pick(2, 5);
      const std::uint64_t id = next_id;
      next_id += ids_per_task;
      first_ids.push_back(id);
      handles.push_back(loop.spawn([&, kind, d1, d2, ticks, id]() -> task<void> {
        const instant start = platform::clock::now();
        switch (kind) {
          case 0: {  // sleep
            timers.armed(id, start + d1);
            co_await sleep_until(armed_for(start, start + d1));
            timers.fired(id, platform::clock::now());
            break;
          }
          case 1: {  // timeout around a sleep: exactly one of the two fires
            timers.armed(id, start + d1);      // the timeout
            timers.armed(id + 1, start + d2);  // the inner sleep
            auto r = co_await timeout_at(armed_for(start, start + d1), sleep_until(armed_for(start, start + d2)));
            if (r) {
              timers.fired(id + 1, platform::clock::now());
              timers.cancelled(id);
            } else {
              timers.fired(id, platform::clock::now());
              timers.cancelled(id + 1);
            }
            break;
          }
          case 2: {  // a loop timer (callback as a macrotask)
            timers.armed(id, start + d1);
            loop.set_timeout(armed_for(start, start + d1) - start,
                             [&timers, id] { timers.fired(id, platform::clock::now()); });
            break;
          }
          default: {  // an interval: tick k is due at start + k * period
            const duration period = std::max<duration>(d1 / 4, 1ms);
            interval iv(period);
            for (std::uint64_t k = 0; k < ticks; ++k) {
              timers.armed(id + 2 + k, start + k * period);
              co_await iv.tick();
              timers.fired(id + 2 + k, platform::clock::now());
            }
            break;
          }
        }
      }));
    }
    for (std::size_t i = 0; i < handles.size(); ++i) {
      auto r = co_await settle_join(handles[i]);
      if (!r && r.error().is_panicked() && panics_injected) {
        timers.cancel_unsettled(first_ids[i], ids_per_task);  // its pending sleeps went with it
      } else if (!r) {
        sim.fail(std::string("timer_storm: a task ended ") + to_string(r.error().get_kind()));
      }
    }
  }());

  for (auto& t : threads) t.join();
  loop.run();  // loop timers and remotely armed timers still pending
  timers.check();
  sim.note("timer_storm: " + std::to_string(timers.count_fired()) + " timers fired");
}

// The knobs timer_storm reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> timer_storm_knobs() {
  return {
      {"tasks", 1, 10'000, "timer tasks on the loop"},
      {"remote", 0, 1000, "sleeps submitted from another thread"},
  };
}

}  // namespace weft::sim::scenarios
