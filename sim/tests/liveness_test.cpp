// liveness_test.cpp — the liveness phase (context::start_liveness / recovered): faults of every
// kind stop when the fault window closes; a service that retries reaches its goal within the
// recovery bound, one that wedges after a fault fails "did not recover"; misuse fails the run
// naming its line.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include <weft/buggify.hpp>
#include <weft/sim/check.hpp>
#include <weft/weft.hpp>

namespace {

using namespace std::chrono_literals;
using weft::sim::check;
using weft::sim::check_result;

weft::sim::options buggify_always() {
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::buggify)] = weft::sim::ppm_one;
  return o;
}

constexpr auto window = 10ms;
constexpr auto bound = 5ms;

// A client sending one request over a link that drops it whenever the site misbehaves. The
// patient client tries again every millisecond; the wedged one gives up on the link after its
// first drop and waits for an answer that never comes.
weft::task<void> client(weft::sim::context* sim, bool wedges_after_a_drop) {
  for (;;) {
    co_await weft::sleep(1ms);
    if (!weft::sim::buggify("link.drop")) break;
    WEFT_SIM_PROBE("liveness_test.request_dropped");
    if (wedges_after_a_drop) {
      co_await weft::sleep(1h);
      co_return;
    }
  }
  sim->recovered();
}

void service(weft::sim::context& sim, bool wedges_after_a_drop) {
  sim.start_liveness(window, bound);
  weft::event_loop loop;
  loop.block_on(client(&sim, wedges_after_a_drop));
}

TEST(liveness, a_client_that_retries_recovers_once_the_faults_stop) {
  const check_result r =
      check({.seeds = 100, .sim = buggify_always()}, [](weft::sim::context& sim) { service(sim, false); });
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_EQ(r.seeds_run, 100u);
  // The runs where the site was active dropped requests through the whole window (about half).
  bool dropped = false;
  for (const auto& c : r.probes.coverage()) {
    if (c.name == "liveness_test.request_dropped") dropped = c.runs > 10 && c.hits >= c.runs * 9;
  }
  EXPECT_TRUE(dropped) << r.probes.describe();
}

TEST(liveness, a_client_that_wedges_after_a_fault_did_not_recover) {
  const check_result r = check({.seeds = 100, .sim = buggify_always(), .shrink = false},
                               [](weft::sim::context& sim) { service(sim, true); });
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_EQ(r.failures.front().rfind("did not recover: the goal (context::recovered) was not reached", 0), 0u)
      << r.failures.front();
}

TEST(liveness, no_fault_is_drawn_after_the_window) {
  const check_result r = check({.seeds = 50, .sim = buggify_always()}, [](weft::sim::context& sim) {
    sim.start_liveness(window, bound);
    weft::event_loop loop;
    loop.block_on([](weft::sim::context* sim) -> weft::task<void> {
      co_await weft::sleep(window + 1ms);
      for (int i = 0; i < 100; ++i) {
        if (weft::sim::buggify("late.site")) sim->fail("a buggify site fired after the fault window");
      }
      sim->recovered();
    }(&sim));
  });
  EXPECT_TRUE(r.passed) << r.message();
}

TEST(liveness, a_scenario_that_ends_without_its_goal_did_not_recover) {
  const check_result r = check({.seeds = 1, .shrink = false}, [](weft::sim::context& sim) {
    sim.start_liveness(window, bound);
  });
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.failures.front().rfind("did not recover: the scenario ended without reaching its goal", 0), 0u)
      << r.failures.front();
}

// A window or bound past virtual time's range lasts to the end of the run: it neither wraps into
// the past (faults off at once, the goal overdue at once) nor overflows.
TEST(liveness, a_window_and_bound_longer_than_the_clock_holds_last_the_run) {
  const check_result r = check({.seeds = 20, .sim = buggify_always()}, [](weft::sim::context& sim) {
    sim.start_liveness(1ms, weft::duration::max());
    weft::event_loop loop;
    loop.block_on([](weft::sim::context* sim) -> weft::task<void> {
      co_await weft::sleep(10ms);
      sim->recovered();
    }(&sim));
  });
  EXPECT_TRUE(r.passed) << r.message();
  bool drawn = false;
  const check_result open_window = check({.seeds = 1, .sim = buggify_always()}, [&drawn](weft::sim::context& sim) {
    sim.start_liveness(weft::duration::max(), 1ms);
    weft::event_loop loop;
    loop.block_on([&drawn]() -> weft::task<void> {
      co_await weft::sleep(10ms);
      for (int i = 0; i < 100 && !drawn; ++i) drawn = weft::sim::buggify("open.site");
    }());
  });
  EXPECT_TRUE(drawn) << "no fault was drawn inside a window that lasts the run";
  EXPECT_FALSE(open_window.passed) << "the goal was never reached";
}

TEST(liveness, misuse_fails_the_run_naming_the_line) {
  const check_result twice = check({.seeds = 1, .shrink = false}, [](weft::sim::context& sim) {
    sim.start_liveness(window, bound);
    sim.start_liveness(window, bound);
    sim.recovered();
  });
  ASSERT_FALSE(twice.passed);
  EXPECT_NE(twice.failures.front().find("start_liveness called twice"), std::string::npos) << twice.failures.front();
  EXPECT_NE(twice.failures.front().find("liveness_test.cpp:"), std::string::npos) << twice.failures.front();

  const check_result unbounded = check({.seeds = 1, .shrink = false}, [](weft::sim::context& sim) {
    sim.start_liveness(window, weft::duration::zero());
  });
  ASSERT_FALSE(unbounded.passed);
  EXPECT_NE(unbounded.failures.front().find("a recovery bound > 0"), std::string::npos) << unbounded.failures.front();

  const check_result orphan = check({.seeds = 1, .shrink = false}, [](weft::sim::context& sim) { sim.recovered(); });
  ASSERT_FALSE(orphan.passed);
  EXPECT_NE(orphan.failures.front().find("recovered() without a liveness phase"), std::string::npos)
      << orphan.failures.front();
}

}  // namespace
