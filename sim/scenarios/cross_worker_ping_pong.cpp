// Built-in scenario cross_worker_ping_pong (see cross_worker_ping_pong.hpp).
#include "cross_worker_ping_pong.hpp"

#include <weft/sim/scenario.hpp>

WEFT_SIM_SCENARIO(cross_worker_ping_pong) (weft::sim::context& sim) {
  weft::sim::scenarios::cross_worker_ping_pong<weft::sim::scenarios::ping_pong_variant::correct>(sim);
}
WEFT_SIM_SCENARIO_DOC(cross_worker_ping_pong,
                      "task pairs on different workers pass a ball (cross-worker wakes, joins); tasks never move");
WEFT_SIM_SCENARIO_KNOBS(cross_worker_ping_pong, weft::sim::scenarios::cross_worker_ping_pong_knobs());
