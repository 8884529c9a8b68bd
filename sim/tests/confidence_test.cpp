// confidence_test.cpp — the PCT detection bound: its arithmetic, and the line run and fuzz print
// with n and k measured from their own runs.
#include <cmath>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include <weft/sim/confidence.hpp>

#include "cli_support.hpp"

namespace {

using weft::sim::pct_detection_bound;
using weft::sim::testing::binary;
using weft::sim::testing::output;
using weft::sim::testing::shell;

TEST(pct_bound, per_run_is_one_over_n_times_k_to_the_depth_minus_one) {
  EXPECT_DOUBLE_EQ(pct_detection_bound(1, 4, 1000, 10).per_run(), 0.25);
  EXPECT_NEAR(pct_detection_bound(3, 4, 100, 10).per_run(), 1.0 / (4.0 * 100 * 100), 1e-15);
  EXPECT_NEAR(pct_detection_bound(2, 0, 0, 0).per_run(), 1.0, 1e-15) << "zero threads and steps count as one";
}

TEST(pct_bound, n_seeds_miss_with_at_most_one_minus_p_to_the_n) {
  const auto b = pct_detection_bound(3, 4, 100, 10);
  const double p = 1.0 / 40'000;
  EXPECT_NEAR(b.miss(1'000), std::pow(1 - p, 1'000), 1e-12);
  EXPECT_DOUBLE_EQ(b.miss(0), 1.0);
  EXPECT_DOUBLE_EQ(pct_detection_bound(1, 1, 1, 1).miss(1), 0.0) << "p = 1: one run cannot miss";
}

TEST(pct_bound, a_bound_below_a_double_is_printed_as_a_power_of_ten_not_zero) {
  const auto b = pct_detection_bound(200, 8, 1'000'000, 10);
  EXPECT_EQ(b.per_run(), 0.0);
  EXPECT_NE(b.describe(5).find("p >= 10^-"), std::string::npos) << b.describe(5);
  EXPECT_NE(b.describe(5).find("probability <= 1"), std::string::npos) << b.describe(5);
}

std::string field(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return "";
  return m[1];
}

// d - 1 change points at distinct steps do not fit in fewer than d - 1 steps: the line says the
// bound promises nothing rather than quoting a p for bugs that cannot exist.
TEST(pct_bound, fewer_steps_than_change_points_is_called_vacuous) {
  const weft::sim::pct_bound short_range = pct_detection_bound(5, 2, 3, 3);
  EXPECT_NE(short_range.describe(10).find(
                " (vacuous: a depth-5 bug orders 4 distinct steps, more than k=3; --pct-steps 4 or more gives a bound)"),
            std::string::npos)
      << short_range.describe(10);
  const weft::sim::pct_bound enough = pct_detection_bound(5, 2, 4, 4);
  EXPECT_EQ(enough.describe(10).find("vacuous"), std::string::npos) << enough.describe(10);
}

TEST(pct_bound, run_and_fuzz_print_it_from_their_measured_threads_and_steps) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const output run = shell(binary() + " run --scenario wake_storm --seed 5 --strategy pct --depth 2 --pct-steps 50000");
  ASSERT_EQ(run.status, 0) << run.text;
  const std::string threads = field(run.text, "stats: .* threads=([0-9]+)");
  ASSERT_FALSE(threads.empty()) << run.text;
  const std::string line = field(run.text, "\n(pct-bound: [^\n]*)");
  EXPECT_NE(line.find("d=2 n=" + threads + " k=50000:"), std::string::npos) << run.text;
  EXPECT_NE(line.find("1 seed misses it"), std::string::npos) << line;
  EXPECT_EQ(line.find("steps past k"), std::string::npos) << "no run outlasted k: " << line;

  const output random = shell(binary() + " run --scenario wake_storm --seed 5");
  EXPECT_EQ(random.text.find("pct-bound:"), std::string::npos) << "the bound is PCT's alone";

  // k below the runs' length: the line says which steps the bound leaves out.
  const output fuzz = shell(binary() + " fuzz --scenario wake_storm --seeds 20 --strategy pct --depth 3 --pct-steps 10");
  ASSERT_EQ(fuzz.status, 0) << fuzz.text;
  const std::string summary = field(fuzz.text, "\n(pct-bound: [^\n]*)");
  EXPECT_NE(summary.find("d=3 "), std::string::npos) << summary;
  EXPECT_NE(summary.find(" k=10: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("20 seeds miss it"), std::string::npos) << summary;
  EXPECT_NE(summary.find("steps past k are never a change point"), std::string::npos) << summary;
}

}  // namespace
