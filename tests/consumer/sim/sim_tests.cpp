// sim_tests.cpp — a user's GoogleTest suite with simulation tests, built against an installed
// weft (pkg-config weft-sim gtest_main). `counter.fetch_add_never_loses` passes every seed;
// `counter.split_increment_loses` has the planted lost update of increments.hpp, so its check
// fails it and prints the line that reruns the failing seed alone.
#include <weft/sim/gtest.hpp>

#include "increments.hpp"

WEFT_SIM_TEST(counter, fetch_add_never_loses) { increment_twice(sim, false); }

WEFT_SIM_TEST_WITH(counter, split_increment_loses, (weft::sim::check_options{.seeds = 500})) {
  increment_twice(sim, true);
}
