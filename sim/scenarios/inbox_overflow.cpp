// Built-in scenario inbox_overflow (see inbox_overflow.hpp).
#include "inbox_overflow.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(inbox_overflow) (weft::sim::context& sim) {
  weft::sim::scenarios::inbox_overflow<weft::sim::scenarios::inbox_overflow_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(inbox_overflow, "producers vs a tiny inbox while run() closes it; accepted runs once, refused never");
WEFT_SIM_SCENARIO_KNOBS(inbox_overflow, weft::sim::scenarios::inbox_overflow_knobs());
