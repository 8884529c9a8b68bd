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
// Only this header needs GoogleTest; check() itself works without it.
#pragma once

#include <cerrno>  // program_invocation_name
#include <string>

#include <gtest/gtest.h>

#include <weft/sim/check.hpp>

namespace weft::sim {

// The body of every WEFT_SIM_TEST: runs the check under the test's own name.
inline void gtest_check(const char* suite, const char* name, check_options o, void (*body)(context&)) {
  const std::string test = std::string(suite) + "." + name;
  o.name = test;
  if (o.rerun.empty()) o.rerun = shell_word(program_invocation_name) + " " + shell_word("--gtest_filter=" + test);
  const check_result r = check(o, body);
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
