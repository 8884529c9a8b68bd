// Built-in scenario remote_wake_order (see remote_wake_order.hpp).
#include "remote_wake_order.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(remote_wake_order) (weft::sim::context& sim) { weft::sim::scenarios::remote_wake_order(sim); }
WEFT_SIM_SCENARIO_DOC(remote_wake_order,
                      "threads wake tasks of a loop busy with macrotasks; each runs at the next checkpoint");
WEFT_SIM_SCENARIO_KNOBS(remote_wake_order, weft::sim::scenarios::remote_wake_order_knobs());
