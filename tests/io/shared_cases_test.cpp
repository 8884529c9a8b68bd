// shared_cases_test.cpp — the I/O behaviours of io_cases.hpp on both real drivers (the simulator
// runs the same source: sim/tests/io_api_test.cpp).
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "io_cases.hpp"
#include "io_test_support.hpp"

namespace weft {
namespace {

class shared_case : public ::testing::TestWithParam<std::tuple<io_driver_choice, std::size_t>> {};

TEST_P(shared_case, holds) {
  const auto [choice, index] = GetParam();
  std::unique_ptr<event_loop> loop;
  try {
    loop = std::make_unique<event_loop>(io_test::options_for(choice));
  } catch (const io_unavailable_error& e) {
    GTEST_SKIP() << "io_uring unavailable on this machine: " << e.what();
  }
  const auto& c = io_cases::all()[index];
  const std::string failure = loop->block_on(c.run(::testing::TempDir()));
  EXPECT_EQ(failure, "") << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    drivers, shared_case,
    ::testing::Combine(::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                       ::testing::Range<std::size_t>(0, io_cases::all().size())),
    [](const auto& info) {
      return std::string(to_string(std::get<0>(info.param))) + "_" + io_cases::all()[std::get<1>(info.param)].name;
    });

}  // namespace
}  // namespace weft
