// Built-in scenario shutdown_race (see shutdown_race.hpp).
#include "shutdown_race.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(shutdown_race) (weft::sim::context& sim) {
  weft::sim::scenarios::shutdown_race<weft::sim::scenarios::shutdown_race_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(shutdown_race,
                      "4 workers, 100 submissions from several threads (spawn/anywhere/everywhere/blocking) racing stop");
WEFT_SIM_SCENARIO_KNOBS(shutdown_race, weft::sim::scenarios::shutdown_race_knobs());
