// Pinned workers in the simulator: runtime::builder().pin_workers() must run in the `sim` flavor
// like any other feature. The simulated machine has `cores` CPUs (a run option); pinning a fiber
// changes nothing about the schedule, but the CPU assignment, the tasks on pinned workers and a
// refused pin (the fault plan's `worker_start_failure`, injected at the pin) are all exercised.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>

namespace {

// More workers than the simulated machine's CPUs, so the assignment wraps around.
constexpr std::size_t pinned_workers = 6;

struct pinning_outcomes {
  std::size_t started = 0;        // runs whose runtime started pinned
  std::size_t pin_refused = 0;    // runs whose start failed at a pin
  std::size_t start_refused = 0;  // runs whose start failed at a thread start
};
pinning_outcomes outcomes;

}  // namespace

WEFT_SIM_SCENARIO(test_pinned_workers) (weft::sim::context& sim) {
  std::optional<weft::runtime> rt;
  try {
    rt.emplace(weft::runtime::builder().workers(pinned_workers).pin_workers().build());
  } catch (const weft::start_error& e) {
    const std::string why = e.what();
    if (why.find("cannot pin it to CPU") != std::string::npos) {
      ++outcomes.pin_refused;
    } else {
      ++outcomes.start_refused;
    }
    return;
  }
  ++outcomes.started;
  const unsigned cpus = sim.opts().cores;
  for (std::size_t i = 0; i < pinned_workers; ++i) {
    const std::optional<unsigned> cpu = rt->worker_cpu(i);
    if (!cpu || *cpu != i % cpus) {
      sim.fail("worker " + std::to_string(i) + " pinned to " + (cpu ? std::to_string(*cpu) : "nothing") +
               ", expected CPU " + std::to_string(i % cpus));
    }
    auto r = rt->worker_scheduler(i)
                 .spawn([]() -> weft::task<std::size_t> { co_return weft::builtins::current().worker().index; })
                 .join();
    if (!r || *r != i) sim.fail("a task placed on pinned worker " + std::to_string(i) + " ran elsewhere");
  }
  (void)std::move(*rt).stop();
}

namespace {

TEST(pinning, pinned_workers_get_one_cpu_each_and_run_their_tasks_in_the_simulator) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_pinned_workers");
  ASSERT_NE(s, nullptr);
  outcomes = {};
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto r = weft::sim::run(*s, seed, {});
    ASSERT_TRUE(r.passed) << "seed " << seed << ": " << r.failures.front();
  }
  EXPECT_EQ(outcomes.started, 20u);
}

TEST(pinning, a_refused_pin_fails_the_start_cleanly) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("test_pinned_workers");
  ASSERT_NE(s, nullptr);
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::worker_start_failure)] = 100'000;
  outcomes = {};
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const auto r = weft::sim::run(*s, seed, o);  // no leak, deadlock or stranded worker either way
    ASSERT_TRUE(r.passed) << "seed " << seed << ": " << r.failures.front();
  }
  EXPECT_GT(outcomes.pin_refused, 0u);  // the pin's own failure path ran
  EXPECT_EQ(outcomes.started + outcomes.pin_refused + outcomes.start_refused, 60u);
}

}  // namespace
