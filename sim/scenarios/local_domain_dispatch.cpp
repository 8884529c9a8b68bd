// Built-in scenario local_domain_dispatch (see local_domain_dispatch.hpp).
#include "local_domain_dispatch.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(local_domain_dispatch) (weft::sim::context& sim) {
  weft::sim::scenarios::local_domain_dispatch<weft::sim::scenarios::local_domain_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(local_domain_dispatch,
                      "a host drives a local_domain (run_n/run_for) while threads spawn and dispatch into it");
WEFT_SIM_SCENARIO_KNOBS(local_domain_dispatch, weft::sim::scenarios::local_domain_dispatch_knobs());
