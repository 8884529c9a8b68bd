// Test-only scenarios: the known-bad variants that prove each oracle (and the deadlock and
// livelock detectors) can fail, plus small scenarios the engine tests use. Never linked into the
// weft-sim binary.
#include <chrono>

#include <weft/event_loop.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/time.hpp>

#include "../scenarios/cross_worker_ping_pong.hpp"
#include "../scenarios/inbox_overflow.hpp"
#include "../scenarios/local_domain_dispatch.hpp"
#include "../scenarios/shutdown_race.hpp"
#include "../scenarios/timer_storm.hpp"
#include "../scenarios/wake_storm.hpp"

using namespace weft::sim::scenarios;

WEFT_SIM_SCENARIO(wake_storm_lost_wake) (weft::sim::context& sim) {
  wake_storm<wake_storm_variant::lost_wake>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(wake_storm_lost_wake, wake_storm_knobs());
WEFT_SIM_SCENARIO(timer_storm_early) (weft::sim::context& sim) {
  timer_storm<timer_storm_variant::early>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(timer_storm_early, timer_storm_knobs());
WEFT_SIM_SCENARIO(inbox_overflow_stranded) (weft::sim::context& sim) {
  inbox_overflow<inbox_overflow_variant::stranded>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(inbox_overflow_stranded, inbox_overflow_knobs());
WEFT_SIM_SCENARIO(shutdown_race_finished_early) (weft::sim::context& sim) {
  shutdown_race<shutdown_race_variant::finished_early>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(shutdown_race_finished_early, shutdown_race_knobs());
WEFT_SIM_SCENARIO(cross_worker_ping_pong_migrate) (weft::sim::context& sim) {
  cross_worker_ping_pong<ping_pong_variant::migrate>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(cross_worker_ping_pong_migrate, cross_worker_ping_pong_knobs());
WEFT_SIM_SCENARIO(local_domain_dispatch_macro_follow_up) (weft::sim::context& sim) {
  local_domain_dispatch<local_domain_variant::macro_follow_up>(sim);
}
WEFT_SIM_SCENARIO_KNOBS(local_domain_dispatch_macro_follow_up, local_domain_dispatch_knobs());

// A WEFT_ASSERT that fails inside a run: the run fails with the assertion, the process goes on.
WEFT_SIM_SCENARIO(test_assert_fails) (weft::sim::context& sim) {
  weft::platform::thread other([&] {
    sim.name_thread("asserter");
    weft::platform::yield_thread();
    WEFT_ASSERT(sim.seed() == 0xdead);  // fails for every seed the tests use
  });
  other.join();
}

// A wait that nothing will ever notify: every thread blocked, no deadline.
WEFT_SIM_SCENARIO(test_lost_notify) (weft::sim::context& sim) {
  weft::sync::mutex lock;
  weft::sync::condvar cv;
  bool ready = false;  // under lock
  weft::platform::thread waiter([&] {
    sim.name_thread("waiter");
    weft::sync::unique_lock<weft::sync::mutex> hold(lock);
    while (!ready) cv.wait(hold);
  });
  waiter.join();
}

// A thread that spins forever: the step budget catches it.
WEFT_SIM_SCENARIO(test_spin_forever) (weft::sim::context&) {
  weft::sync::atomic<bool> stop{false};
  while (!stop.load(std::memory_order_relaxed)) weft::platform::yield_thread();
}

// One hour of virtual sleep on an event loop.
WEFT_SIM_SCENARIO(test_sleep_one_hour) (weft::sim::context& sim) {
  using namespace std::chrono_literals;
  weft::event_loop loop;
  const weft::instant before = weft::platform::clock::now();
  loop.block_on([]() -> weft::task<void> { co_await weft::sleep(1h); }());
  const weft::instant after = weft::platform::clock::now();
  if (after - before < 1h) sim.fail("slept less than an hour of virtual time");
}

// Reads a knob it does not declare: every run fails.
WEFT_SIM_SCENARIO(test_undeclared_knob) (weft::sim::context& sim) { (void)sim.param("undeclared", 1); }

// Declares n in [3, 10] and falls back to 11 on its own: every run fails.
WEFT_SIM_SCENARIO(test_knob_fallback_out_of_range) (weft::sim::context& sim) { (void)sim.param("n", 11); }
WEFT_SIM_SCENARIO_KNOBS(test_knob_fallback_out_of_range, {{"n", 3, 10, "a count"}});

// Fails when n >= 5, and at seed 0 for every n: shrink tests its knob floor and seed tries.
WEFT_SIM_SCENARIO(test_fails_with_knob) (weft::sim::context& sim) {
  if (sim.param("n", 8) >= 5 || sim.seed() == 0) sim.fail("n too large");
}
WEFT_SIM_SCENARIO_KNOBS(test_fails_with_knob, {{"n", 3, 10, "a count"}});

// Planted nondeterminism: a count kept in a static survives from run to run, so the second run
// of a seed yields once more or once less than the first. `--check-determinism` must report it.
WEFT_SIM_SCENARIO(test_state_leaks_across_runs) (weft::sim::context& sim) {
  static int runs = 0;  // deliberately not reset per run: this is the bug
  ++runs;
  weft::platform::thread other([&] {
    sim.name_thread("leaky");
    for (int i = 0; i < 1 + runs % 2; ++i) weft::platform::yield_thread();
  });
  other.join();
}
