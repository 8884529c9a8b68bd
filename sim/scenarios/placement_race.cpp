// Built-in scenario placement_race (see placement_race.hpp).
#include "placement_race.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(placement_race) (weft::sim::context& sim) { weft::sim::scenarios::placement_race(sim); }
WEFT_SIM_SCENARIO_DOC(placement_race,
                      "placements (everywhere, anywhere with an input, on a worker) from workers and threads racing stop");
WEFT_SIM_SCENARIO_KNOBS(placement_race, weft::sim::scenarios::placement_race_knobs());
