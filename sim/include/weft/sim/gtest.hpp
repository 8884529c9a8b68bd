// weft/sim/gtest.hpp — simulation tests as GoogleTest tests.
//
//   WEFT_SIM_TEST(counter, never_loses_an_increment) {
//     ... sim is the weft::sim::context; sim.fail("...") fails the seed ...
//   }
//   WEFT_SIM_TEST_WITH(counter, under_pct, (weft::sim::check_options{.seeds = 1000,
//                                           .sim = {.strategy = weft::sim::strategy_kind::pct}})) {...}
//
// Each is a TEST(suite, name) that runs weft::sim::check() (weft/sim/check.hpp, including its
// WEFT_SIM_* environment knobs) and, on a failing seed, fails with the check's report, whose last
// line reruns exactly that seed:
//   reproduce: WEFT_SIM_SEED=17 ./my_tests --gtest_filter=counter.never_loses_an_increment
// A GoogleTest assertion (EXPECT_*, ASSERT_*, FAIL) that fails in the body fails the seed as
// sim.fail does, with the assertion's message: it is caught, not reported to the test, which
// fails once, with the report. Only this header needs GoogleTest; check() itself works without it.
#pragma once

#include <weft/compiler_support.hpp>

#include <cerrno>  // program_invocation_name
#include <string>

#include <gtest/gtest-spi.h>  // ScopedFakeTestPartResultReporter
#include <gtest/gtest.h>

#include <weft/sim/check.hpp>

namespace weft::sim {

// A failed GoogleTest assertion as a run's failure: where it is, then GoogleTest's message.
inline std::string gtest_failure_text(const ::testing::TestPartResult& part) {
  const std::string where = part.file_name() == nullptr
                                ? std::string("an unknown file")
                                : std::string(part.file_name()) + ":" + std::to_string(part.line_number());
  return "GoogleTest assertion failed at " + where + ": " + part.message();
}

// The body of every WEFT_SIM_TEST: runs the check under the test's own name.
inline void gtest_check(const char* suite, const char* name, check_options o, void (*body)(context&)) {
  const std::string test = std::string(suite) + "." + name;
  o.name = test;
  if (o.rerun.empty()) o.rerun = shell_word(program_invocation_name) + " " + shell_word("--gtest_filter=" + test);
  // Assertions are caught for the whole check, on every thread (runs happen on the simulator's
  // own), and each fails the run it came from: the seed is then found, shrunk and reproduced like
  // any sim.fail, and the shrinker's thousands of reruns add no failures to the test.
  ::testing::TestPartResultArray caught;
  check_result r;
  {
    const ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &caught);
    r = check(o, [body, &caught](context& sim) {
      const int before = caught.size();
      body(sim);
      for (int i = before; i < caught.size(); ++i) {
        if (caught.GetTestPartResult(i).failed()) sim.fail(gtest_failure_text(caught.GetTestPartResult(i)));
      }
    });
  }
  if (!r.passed) ADD_FAILURE() << r.message();
}

}  // namespace weft::sim

#define WEFT_SIM_TEST_WITH(suite, name, options)                                         \
  static void weft_sim_test_##suite##_##name(::weft::sim::context&);                     \
  TEST(suite, name) {                                                                    \
    ::weft::sim::gtest_check(#suite, #name, options, &weft_sim_test_##suite##_##name);   \
  }                                                                                      \
  static void weft_sim_test_##suite##_##name([[maybe_unused]] ::weft::sim::context& sim)

#define WEFT_SIM_TEST(suite, name) WEFT_SIM_TEST_WITH(suite, name, ::weft::sim::check_options{})
