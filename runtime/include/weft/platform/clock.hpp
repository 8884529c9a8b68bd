// weft/platform/clock.hpp — the only source of "now" above the seam.
//
// All flavors share one time_point type (steady_clock's), so timers and deadlines are ordinary
// std::chrono values; what differs is who advances it: the OS (real) or the simulator's virtual
// clock (sim), which moves only when every simulated thread is blocked.
#pragma once

#include <weft/platform/flavor.hpp>

#include <chrono>

namespace weft {
using duration = std::chrono::nanoseconds;
using instant = std::chrono::steady_clock::time_point;
}  // namespace weft

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/clock.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/clock.hpp>
#else
#include <weft/platform/model/clock.hpp>
#endif
