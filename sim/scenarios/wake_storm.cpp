// Built-in scenario wake_storm (see wake_storm.hpp).
#include "wake_storm.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(wake_storm) (weft::sim::context& sim) {
  weft::sim::scenarios::wake_storm<weft::sim::scenarios::wake_storm_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(wake_storm, "threads wake loop tasks (with duplicate and spurious wakes); every task ends ok once");
WEFT_SIM_SCENARIO_KNOBS(wake_storm, weft::sim::scenarios::wake_storm_knobs());
