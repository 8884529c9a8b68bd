// timer_storm — many sleeps, timeouts (around sleeps and around tasks), loop timers and intervals
// on one loop, plus a remote thread that arms loop timers through macrotasks.
//
// Oracles (timers.hpp): no timer fires before its deadline in virtual time, and every armed timer
// settles (fires or is cancelled) exactly once; the loop's timers fire in (deadline, arming)
// order and at their deadline, never later; a task whose timeout elapsed never runs on past the
// await it was suspended at, and its frame is destroyed. Half the delays are whole milliseconds,
// so deadlines often tie. Virtual time only moves when every fiber is blocked, so long sleeps
// cost no wall time.
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
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(4, 48))));
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
    if (sim.pick(0, 1) == 0) return duration(std::chrono::milliseconds(sim.pick(0, 8)));  // ties
    return duration(std::chrono::milliseconds(sim.pick(0, 50)) + std::chrono::microseconds(sim.pick(0, 999)));
  };

  oracles::timer_ledger timers(sim);
  oracles::timer_order order(sim);
  oracles::timeout_ledger timeouts(sim);
  // Each timer goes to both ledgers; `order` is told the deadline actually armed. Call these just
  // before the call that arms the timer (see timer_order).
  auto arm_sleep = [&](std::uint64_t id, instant deadline, instant armed_deadline) {
    timers.armed(id, deadline);
    order.sleep_armed(id, armed_deadline);
  };
  auto fire = [&](std::uint64_t id) {
    timers.fired(id, platform::clock::now());
    order.fired(id);
  };
  // With the task_exception fault on (e.g. --swarm), any await may throw: a task that ends
  // panicked is allowed, and the timers it had armed but not seen settle count as cancelled.
  const bool panics_injected = sim.fault_enabled(platform::fault::task_exception);
  constexpr std::uint64_t ids_per_task = 8;  // timer ids reserved per task (an interval uses 2 + ticks)
  event_loop loop;
  std::uint64_t next_id = 0;  // loop thread only

  // The task a timeout runs (ids `id`, its sleep `id + 1`). Captureless, its state in parameters:
  // a broken runtime may run it past the scope that awaited it. Its frame, destroyed at the
  // await, settles its sleep as cancelled (the sleep's leaf cancels the timer there).
  auto timed_task_body = [](auto& arm_sleep, auto& fire, oracles::timer_ledger& timers,
                            oracles::timeout_ledger& timeouts, std::uint64_t id, instant deadline,
                            instant armed_deadline) -> task<void> {
    struct frame_guard {
      oracles::timer_ledger& timers;
      oracles::timeout_ledger& timeouts;
      std::uint64_t id;
      bool resumed = false;
      ~frame_guard() {
        if (!resumed) timers.cancelled(id + 1);
        timeouts.destroyed(id);
      }
    } guard{timers, timeouts, id};
    timeouts.started(id);
    arm_sleep(id + 1, deadline, armed_deadline);
    co_await sleep_until(armed_deadline);
    guard.resumed = true;
    timeouts.resumed(id);
    fire(id + 1);
  };
  auto timed_task = [&](std::uint64_t id, instant deadline, instant armed_deadline) {
    return timed_task_body(arm_sleep, fire, timers, timeouts, id, deadline, armed_deadline);
  };

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
        order.armed(id, armed_for(now, now + d));
        loop.set_timeout(armed_for(now, now + d) - now, [&fire, id] { fire(id); });
      });
    }
  }));

  loop.block_on([&]() -> task<void> {
    std::vector<join_handle<void>> handles;
    std::vector<std::uint64_t> first_ids;
    for (std::size_t i = 0; i < tasks; ++i) {
      const std::uint64_t kind = sim.pick(0, 5);
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
            arm_sleep(id, start + d1, armed_for(start, start + d1));
            co_await sleep_until(armed_for(start, start + d1));
            fire(id);
            break;
          }
          case 1: {  // timeout around a sleep: exactly one of the two fires
            // The inner sleep is polled (and armed) first, then the timeout's timer, if the
            // inner one is still pending.
            arm_sleep(id + 1, start + d2, armed_for(start, start + d2));  // the inner sleep
            if (armed_for(start, start + d2) > start) arm_sleep(id, start + d1, armed_for(start, start + d1));
            else timers.armed(id, start + d1);  // never armed: settles as cancelled below
            auto r = co_await timeout_at(armed_for(start, start + d1), sleep_until(armed_for(start, start + d2)));
            if (r) {
              fire(id + 1);
              timers.cancelled(id);
            } else {
              fire(id);
              timers.cancelled(id + 1);
            }
            break;
          }
          case 2: {  // a loop timer (callback as a macrotask)
            timers.armed(id, start + d1);
            order.armed(id, armed_for(start, start + d1));
            loop.set_timeout(armed_for(start, start + d1) - start, [&fire, id] { fire(id); });
            break;
          }
          case 3: {  // an interval: tick k is due at start + k * period
            const duration period = std::max<duration>(d1 / 4, 1ms);
            interval iv(period);
            for (std::uint64_t k = 0; k < ticks; ++k) {
              arm_sleep(id + 2 + k, start + k * period, start + k * period);
              co_await iv.tick();
              fire(id + 2 + k);
            }
            break;
          }
          case 4: {  // a loop timer cleared after a sleep (if still pending): cancels from mid-heap
            timers.armed(id, start + d1);
            order.armed(id, armed_for(start, start + d1));
            // Cleared on the way out, a panic at the await included: the loop timer is not the task's.
            struct clear_on_exit {
              event_loop& loop;
              oracles::timer_ledger& timers;
              timer_id t;
              std::uint64_t id;
              ~clear_on_exit() {
                if (loop.clear_timer(t)) timers.cancelled(id);
              }
            } clear{loop, timers,
                    loop.set_timeout(armed_for(start, start + d1) - start, [&fire, id] { fire(id); }), id};
            arm_sleep(id + 1, start + d2, armed_for(start, start + d2));
            co_await sleep_until(armed_for(start, start + d2));
            fire(id + 1);
            break;
          }
          default: {  // timeout around a task that sleeps: the task is aborted if it elapses
            // The inner task is spawned in the first poll and runs later; the timeout's timer is
            // armed in that first poll, so before the inner sleep.
            arm_sleep(id, start + d1, armed_for(start, start + d1));
            auto r = co_await timeout_at(armed_for(start, start + d1),
                                         timed_task(id, start + d2, armed_for(start, start + d2)));
            timeouts.answered(id, !r);
            if (r) {
              timers.cancelled(id);
            } else {
              fire(id);
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
  timeouts.check();
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
