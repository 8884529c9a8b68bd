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

// One run of timer_storm: the ledgers, the loop and the steps, one per kind of timer a task arms.
template <timer_storm_variant Variant>
class timer_storm_run {
 public:
  explicit timer_storm_run(context& sim) : sim_(sim), timers_(sim), order_(sim), timeouts_(sim) {}

  // Step: the remote thread's delays, then the thread, which arms each as a loop timer through a
  // macrotask.
  void start_remote(std::size_t remote, std::vector<platform::thread>& threads) {
    for (std::size_t k = 0; k < remote; ++k) remote_delays_.push_back(random_delay());
    threads.push_back(sim_.start_thread([this] {
      sim_.name_thread("remote");
      for (std::size_t k = 0; k < remote_delays_.size(); ++k) {
        platform::yield_thread();
        const std::uint64_t id = 1'000'000 + k;
        const duration d = remote_delays_[k];
        (void)handle_.queue_macrotask([this, id, d] {
          const instant now = platform::clock::now();
          timers_.armed(id, now + d);
          order_.armed(id, armed_for(now, now + d));
          loop_.set_timeout(armed_for(now, now + d) - now, [this, id] { fire(id); });
        });
      }
    }));
  }

  // Step: the loop spawns `tasks` timer tasks and joins them; then runs until the loop timers and
  // the remotely armed ones have settled (after `threads` are joined).
  void run_loop(std::size_t tasks, std::vector<platform::thread>& threads) {
    loop_.block_on(spawn_and_join(tasks));
    for (auto& t : threads) t.join();
    loop_.run();  // loop timers and remotely armed timers still pending
  }

  void check() {
    timers_.check();
    timeouts_.check();
    sim_.note("timer_storm: " + std::to_string(timers_.count_fired()) + " timers fired");
  }

 private:
  static constexpr std::uint64_t ids_per_task = 8;  // timer ids reserved per task (an interval uses 2 + ticks)

  // What the broken variant does to a deadline (the oracle is told the true one).
  static instant armed_for(instant now, instant deadline) {
    using namespace std::chrono_literals;
    if constexpr (Variant == timer_storm_variant::early) {
      return std::max(now, deadline - 1ms);
    } else {
      (void)now;
      return deadline;
    }
  }
  duration random_delay() {
    if (sim_.pick(0, 1) == 0) return duration(std::chrono::milliseconds(sim_.pick(0, 8)));  // ties
    return duration(std::chrono::milliseconds(sim_.pick(0, 50)) + std::chrono::microseconds(sim_.pick(0, 999)));
  }

  // Each timer goes to both ledgers; `order` is told the deadline actually armed. Call these just
  // before the call that arms the timer (see timer_order).
  void arm_sleep(std::uint64_t id, instant deadline, instant armed_deadline) {
    timers_.armed(id, deadline);
    order_.sleep_armed(id, armed_deadline);
  }
  void fire(std::uint64_t id) {
    timers_.fired(id, platform::clock::now());
    order_.fired(id);
  }

  task<void> spawn_and_join(std::size_t tasks) {
    std::vector<join_handle<void>> handles;
    std::vector<std::uint64_t> first_ids;
    for (std::size_t i = 0; i < tasks; ++i) {
      const std::uint64_t kind = sim_.pick(0, 5);
      const duration d1 = random_delay();
      const duration d2 = random_delay();
      const std::uint64_t ticks = sim_.pick(2, 5);
      const std::uint64_t id = next_id_;
      next_id_ += ids_per_task;
      first_ids.push_back(id);
      handles.push_back(loop_.spawn([this, kind, d1, d2, ticks, id] { return timer_task(kind, d1, d2, ticks, id); }));
    }
    for (std::size_t i = 0; i < handles.size(); ++i) {
      auto r = co_await settle_join(handles[i]);
      if (!r && r.error().is_panicked() && panics_injected_) {
        timers_.cancel_unsettled(first_ids[i], ids_per_task);  // its pending sleeps went with it
      } else if (!r) {
        sim_.fail(std::string("timer_storm: a task ended ") + to_string(r.error().get_kind()));
      }
    }
  }

  // The task a spawn runs: one of the steps below, by kind.
  task<void> timer_task(std::uint64_t kind, duration d1, duration d2, std::uint64_t ticks, std::uint64_t id) {
    switch (kind) {
      case 0: return sleep_once(id, d1);
      case 1: return timeout_around_sleep(id, d1, d2);
      case 2: return loop_timer(id, d1);
      case 3: return interval_ticks(id, d1, ticks);
      case 4: return loop_timer_cleared_after_sleep(id, d1, d2);
      default: return timeout_around_task(id, d1, d2);
    }
  }

  task<void> sleep_once(std::uint64_t id, duration d1) {
    const instant start = platform::clock::now();
    arm_sleep(id, start + d1, armed_for(start, start + d1));
    co_await sleep_until(armed_for(start, start + d1));
    fire(id);
  }

  // A timeout around a sleep: exactly one of the two fires.
  task<void> timeout_around_sleep(std::uint64_t id, duration d1, duration d2) {
    const instant start = platform::clock::now();
    // The inner sleep is polled (and armed) first, then the timeout's timer, if the
    // inner one is still pending.
    arm_sleep(id + 1, start + d2, armed_for(start, start + d2));  // the inner sleep
    if (armed_for(start, start + d2) > start) arm_sleep(id, start + d1, armed_for(start, start + d1));
    else timers_.armed(id, start + d1);  // never armed: settles as cancelled below
    auto r = co_await timeout_at(armed_for(start, start + d1), sleep_until(armed_for(start, start + d2)));
    if (r) {
      fire(id + 1);
      timers_.cancelled(id);
    } else {
      fire(id);
      timers_.cancelled(id + 1);
    }
  }

  // A loop timer (its callback runs as a macrotask).
  task<void> loop_timer(std::uint64_t id, duration d1) {
    const instant start = platform::clock::now();
    timers_.armed(id, start + d1);
    order_.armed(id, armed_for(start, start + d1));
    loop_.set_timeout(armed_for(start, start + d1) - start, [this, id] { fire(id); });
    co_return;
  }

  // An interval: tick k is due at start + k * period.
  task<void> interval_ticks(std::uint64_t id, duration d1, std::uint64_t ticks) {
    using namespace std::chrono_literals;
    const instant start = platform::clock::now();
    const duration period = std::max<duration>(d1 / 4, 1ms);
    interval iv(period);
    for (std::uint64_t k = 0; k < ticks; ++k) {
      arm_sleep(id + 2 + k, start + k * period, start + k * period);
      co_await iv.tick();
      fire(id + 2 + k);
    }
  }

  // A loop timer cleared after a sleep (if still pending): cancels from mid-heap.
  task<void> loop_timer_cleared_after_sleep(std::uint64_t id, duration d1, duration d2) {
    const instant start = platform::clock::now();
    timers_.armed(id, start + d1);
    order_.armed(id, armed_for(start, start + d1));
    // Cleared on the way out, a panic at the await included: the loop timer is not the task's.
    struct clear_on_exit {
      event_loop& loop;
      oracles::timer_ledger& timers;
      timer_id t;
      std::uint64_t id;
      ~clear_on_exit() {
        if (loop.clear_timer(t)) timers.cancelled(id);
      }
    } clear{loop_, timers_, loop_.set_timeout(armed_for(start, start + d1) - start, [this, id] { fire(id); }), id};
    arm_sleep(id + 1, start + d2, armed_for(start, start + d2));
    co_await sleep_until(armed_for(start, start + d2));
    fire(id + 1);
  }

  // A timeout around a task that sleeps: the task is aborted if it elapses.
  task<void> timeout_around_task(std::uint64_t id, duration d1, duration d2) {
    const instant start = platform::clock::now();
    // The inner task is spawned in the first poll and runs later; the timeout's timer is
    // armed in that first poll, so before the inner sleep.
    arm_sleep(id, start + d1, armed_for(start, start + d1));
    auto r = co_await timeout_at(armed_for(start, start + d1), timed_task(*this, id, start + d2, armed_for(start, start + d2)));
    timeouts_.answered(id, !r);
    if (r) {
      timers_.cancelled(id);
    } else {
      fire(id);
    }
  }

  // The task a timeout runs (ids `id`, its sleep `id + 1`). Static, its state in parameters: a
  // broken runtime may run it past the scope that awaited it. Its frame, destroyed at the await,
  // settles its sleep as cancelled (the sleep's leaf cancels the timer there).
  static task<void> timed_task(timer_storm_run& run, std::uint64_t id, instant deadline, instant armed_deadline) {
    struct frame_guard {
      oracles::timer_ledger& timers;
      oracles::timeout_ledger& timeouts;
      std::uint64_t id;
      bool resumed = false;
      ~frame_guard() {
        if (!resumed) timers.cancelled(id + 1);
        timeouts.destroyed(id);
      }
    } guard{run.timers_, run.timeouts_, id};
    run.timeouts_.started(id);
    run.arm_sleep(id + 1, deadline, armed_deadline);
    co_await sleep_until(armed_deadline);
    guard.resumed = true;
    run.timeouts_.resumed(id);
    run.fire(id + 1);
  }

  context& sim_;
  oracles::timer_ledger timers_;
  oracles::timer_order order_;
  oracles::timeout_ledger timeouts_;
  // With the task_exception fault on (e.g. --swarm), any await may throw: a task that ends
  // panicked is allowed, and the timers it had armed but not seen settle count as cancelled.
  const bool panics_injected_ = sim_.fault_enabled(platform::fault::task_exception);
  event_loop loop_;
  std::uint64_t next_id_ = 0;  // loop thread only
  thread_handle handle_ = loop_.handle();  // the remote thread's
  std::vector<duration> remote_delays_;    // the remote thread's, picked before it starts
};

template <timer_storm_variant Variant>
void timer_storm(context& sim) {
  const auto tasks = static_cast<std::size_t>(sim.param("tasks", static_cast<std::int64_t>(sim.pick(4, 48))));
  const auto remote = static_cast<std::size_t>(sim.param("remote", static_cast<std::int64_t>(sim.pick(0, 6))));
  timer_storm_run<Variant> run(sim);
  std::vector<platform::thread> threads;
  join_on_exit joiner(threads);
  run.start_remote(remote, threads);
  run.run_loop(tasks, threads);
  run.check();
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
