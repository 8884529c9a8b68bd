// The runtime_mix scenario and its test-only known-bad variants (see runtime_mix.hpp).
#include "runtime_mix.hpp"

#include <weft/sim/scenario.hpp>

using weft::properties::scenarios::runtime_mix;
using weft::properties::scenarios::runtime_mix_knobs;
using weft::properties::scenarios::runtime_mix_variant;

WEFT_SIM_SCENARIO(runtime_mix) (weft::sim::context& sim) { runtime_mix<runtime_mix_variant::correct>(sim); }
WEFT_SIM_SCENARIO_DOC(runtime_mix,
                      "producers place value/sleeper/parked tasks on runtime workers, abort some, stop: "
                      "outcome, stranding, timer, migration and ordering oracles");
WEFT_SIM_SCENARIO_KNOBS(runtime_mix, runtime_mix_knobs());

WEFT_SIM_SCENARIO(runtime_mix_early_timer) (weft::sim::context& sim) {
  runtime_mix<runtime_mix_variant::early_timer>(sim);
}
WEFT_SIM_SCENARIO_DOC(runtime_mix_early_timer, "test-only known-bad: a sleeper wakes 1 ms before its deadline");
WEFT_SIM_SCENARIO_KNOBS(runtime_mix_early_timer, runtime_mix_knobs());

WEFT_SIM_SCENARIO(runtime_mix_lost_wake) (weft::sim::context& sim) { runtime_mix<runtime_mix_variant::lost_wake>(sim); }
WEFT_SIM_SCENARIO_DOC(runtime_mix_lost_wake, "test-only known-bad: a parked task's gate can lose a wake");
WEFT_SIM_SCENARIO_KNOBS(runtime_mix_lost_wake, runtime_mix_knobs());
