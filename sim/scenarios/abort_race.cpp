// Built-in scenario abort_race (see abort_race.hpp).
#include "abort_race.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(abort_race) (weft::sim::context& sim) { weft::sim::scenarios::abort_race(sim); }
WEFT_SIM_SCENARIO_DOC(abort_race, "tasks aborted from the loop's thread and others, racing their completion");
WEFT_SIM_SCENARIO_KNOBS(abort_race, weft::sim::scenarios::abort_race_knobs());
