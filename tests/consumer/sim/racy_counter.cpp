// racy_counter.cpp — a user's scenario with a planted bug (increments.hpp), for the
// installed-library check: the simulator must find a seed that loses an increment and replay it.
#include <weft/sim/scenario.hpp>

#include "increments.hpp"

WEFT_SIM_SCENARIO(racy_counter)(weft::sim::context& sim) { increment_twice(sim, true); }
WEFT_SIM_SCENARIO_DOC(racy_counter, "two tasks increment a counter across a suspension (planted bug)");
