// io_api_test.cpp — the I/O behaviours of tests/io/io_cases.hpp, the same source the real suite
// runs on io_uring and epoll, here inside simulated runs: many seeds each, so they hold under the
// schedules and latencies the simulator picks, not only one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <weft/event_loop.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "../../tests/io/io_cases.hpp"

namespace {

// Seeds per case: enough to vary schedules and latencies, few enough for the unit suite.
constexpr std::uint64_t seeds_per_case = 50;

std::size_t current_case = 0;  // the body below is a plain function: it reads which case to run

void run_case(weft::sim::context& sim) {
  const auto& c = weft::io_cases::all()[current_case];
  weft::event_loop loop;
  const std::string failure = loop.block_on(c.run("/sim"));
  if (!failure.empty()) sim.fail(std::string(c.name) + ": " + failure);
}

class io_api : public ::testing::TestWithParam<std::size_t> {};

TEST_P(io_api, holds_in_the_simulator) {
  current_case = GetParam();
  const weft::sim::scenario s{"io_api", "", &run_case, {}};
  for (std::uint64_t seed = 0; seed < seeds_per_case; ++seed) {
    const weft::sim::run_result r = weft::sim::run(s, seed, weft::sim::options{});
    ASSERT_TRUE(r.passed) << "seed " << seed << ": " << (r.failures.empty() ? "" : r.failures.front());
  }
}

INSTANTIATE_TEST_SUITE_P(cases, io_api, ::testing::Range<std::size_t>(0, weft::io_cases::all().size()),
                         [](const auto& info) { return std::string(weft::io_cases::all()[info.param].name); });

}  // namespace
