// weft/platform/sim/clock.hpp — the simulator's virtual clock.
//
// now() is the run's virtual time: it starts at the same instant in every run and moves only when
// every simulated thread is blocked, jumping to the earliest pending deadline. Reading it is not
// a scheduling point.
#pragma once

#include <weft/sim/hooks.hpp>

namespace weft::platform {

struct clock {
  static instant now() noexcept { return sim::detail::now(); }
};

}  // namespace weft::platform
