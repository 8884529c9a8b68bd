// buggify_test.cpp — in a production build a service's fault sites and coverage probes
// (weft/buggify.hpp) cost nothing: buggify is the constant false, a probe is no code at all.
#include <gtest/gtest.h>

#include <weft/buggify.hpp>

namespace {

static_assert(!weft::platform::buggify("any.site"), "buggify is a constant false outside the simulator");

int probed(int x) {
  WEFT_SIM_PROBE("real_build.probe");
  if (weft::sim::buggify("real_build.site")) return -1;
  return x + 1;
}

TEST(buggify_real, never_fires_and_a_probe_changes_nothing) {
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(probed(i), i + 1);
}

}  // namespace
