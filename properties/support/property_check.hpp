// properties/support/property_check.hpp — running a rapidcheck property with the suite's fixed
// iteration count and seed, and running a known-bad variant until it fails.
//
// Fixed by default so the suite is repeatable and bounded in time: seed `default_seed` and each
// property's own `max_success`. RC_PARAMS overrides both (nightly: RC_PARAMS="max_success=10000";
// another seed range: RC_PARAMS="seed=N"). A reproduce string (RC_PARAMS="reproduce=...")
// replays one failure exactly.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <rapidcheck.h>

namespace weft::properties {

inline constexpr std::uint64_t default_seed = 20'240'601;

// The current gtest as a --gtest_filter value, the test binary's path (set by main), and the
// rapidcheck seed of the property being checked.
std::string& current_test_filter();
std::string& test_binary();
std::uint64_t& current_rc_seed();
int& current_max_success();

// The size of the case a property last failed on (its command count, or its task count): set by
// the property just before it fails, read by the known-bad checks. rapidcheck keeps a shrunk case
// only when it fails, so after shrinking this is the size of the final counterexample.
std::size_t& last_failing_case_size();
void note_failing_case_size(std::size_t n);

// The parameters a property runs with: RC_PARAMS' seed and max_success if given, else the
// suite's default seed and `max_success`.
rc::detail::TestParams suite_params(int max_success);

// Runs a property as the current gtest; FAILs with rapidcheck's report (counterexample, the seeds
// and replay lines the property printed) when it fails.
template <class Testable>
void check_property(int max_success, Testable&& testable) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  current_test_filter() = std::string(info->test_suite_name()) + "." + info->name();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto params = suite_params(max_success);
  current_rc_seed() = params.seed;
  current_max_success() = params.maxSuccess;
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    if (!result.template get<rc::detail::SuccessResult>().distribution.empty()) {
      rc::detail::printResultMessage(result, std::cout);
      std::cout << std::endl;
    }
    return;
  }
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  FAIL() << report.str() << "\nreplay the whole search: RC_PARAMS=\"seed=" << params.seed
         << " max_success=" << params.maxSuccess << "\" " << test_binary()
         << " --gtest_filter=" << current_test_filter();
}

// The outcome of running a known-bad variant: whether rapidcheck found a counterexample, its
// size after shrinking, and rapidcheck's description of it.
struct counterexample {
  bool found = false;
  std::size_t size = 0;
  std::string report;
};

template <class Testable>
counterexample find_counterexample(const std::string& name, int max_success, Testable&& testable) {
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  metadata.description = name;
  last_failing_case_size() = 0;
  const auto params = suite_params(max_success);
  current_rc_seed() = params.seed;
  current_max_success() = params.maxSuccess;
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    current_test_filter() = std::string(info->test_suite_name()) + "." + info->name();
  }
  // A silent listener: the failure is expected, so it must not end up in rapidcheck's
  // "properties had failures, reproduce with" summary at exit.
  struct silent_listener final : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } listener;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(testable)), metadata,
                                                params, listener);
  counterexample c;
  if (!result.template is<rc::detail::FailureResult>()) return c;
  c.found = true;
  c.size = last_failing_case_size();
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  c.report = report.str();
  return c;
}

}  // namespace weft::properties
