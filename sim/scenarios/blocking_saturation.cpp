// Built-in scenario blocking_saturation (see blocking_saturation.hpp).
#include "blocking_saturation.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(blocking_saturation) (weft::sim::context& sim) { weft::sim::scenarios::blocking_saturation(sim); }
WEFT_SIM_SCENARIO_DOC(blocking_saturation,
                      "spawn_blocking on a 1-2 thread pool racing stop; each call runs or is refused, never both");
WEFT_SIM_SCENARIO_KNOBS(blocking_saturation, weft::sim::scenarios::blocking_saturation_knobs());
