// io_api_test.cpp — the I/O behaviours of tests/io/io_cases.hpp, the same source the real suite
// runs on io_uring and epoll, here inside simulated runs: many seeds each, so they hold under the
// schedules and latencies the simulator picks, not only one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <weft/event_loop.hpp>
#include <weft/io.hpp>
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

// An open whose task is aborted after the open was submitted: the simulated kernel's descriptor
// is closed, not left open for nobody. crash_disk() fails the run while any file is open, so it
// is the check.
void aborted_opens(weft::sim::context& sim) {
  {
    weft::event_loop loop;
    loop.block_on([]() -> weft::task<void> {
      auto made = co_await weft::file::open("/opened", weft::open_options{.read = true, .write = true, .create = true});
      if (made) made->close();
      for (int i = 0; i < 5; ++i) {
        auto opening = weft::spawn(weft::file::open("/opened"));
        co_await weft::yield_now();  // its open is submitted
        opening.abort();
        co_await weft::sleep(std::chrono::milliseconds(10));
      }
    }());
  }
  sim.crash_disk();
}

TEST(io_api_orphans, an_aborted_open_closes_what_it_opened) {
  const weft::sim::scenario s{"io_aborted_open", "", &aborted_opens, {}};
  for (std::uint64_t seed = 0; seed < seeds_per_case; ++seed) {
    const weft::sim::run_result r = weft::sim::run(s, seed, weft::sim::options{});
    ASSERT_TRUE(r.passed) << "seed " << seed << ": " << (r.failures.empty() ? "" : r.failures.front());
  }
}

INSTANTIATE_TEST_SUITE_P(cases, io_api, ::testing::Range<std::size_t>(0, weft::io_cases::all().size()),
                         [](const auto& info) { return std::string(weft::io_cases::all()[info.param].name); });

}  // namespace
