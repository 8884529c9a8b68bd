// Built-in scenario timer_storm (see timer_storm.hpp).
#include "timer_storm.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(timer_storm) (weft::sim::context& sim) {
  weft::sim::scenarios::timer_storm<weft::sim::scenarios::timer_storm_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(timer_storm, "sleeps, timeouts, loop timers, intervals and remote timers; in order, none early or late; timed-out tasks aborted");
WEFT_SIM_SCENARIO_KNOBS(timer_storm, weft::sim::scenarios::timer_storm_knobs());
