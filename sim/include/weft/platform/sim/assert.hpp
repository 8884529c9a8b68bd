// weft/platform/sim/assert.hpp — WEFT_ASSERT in the simulator.
//
// A failed assertion inside a simulated run fails that run, not the process: the engine records
// "assertion failed: <condition> at <file>:<line>" with each simulated thread's state, abandons
// the run's fibers (as after a deadlock: they sit inside noexcept production code and cannot be
// unwound) and the runner goes on with the next seed. Outside a run (the engine's own main
// context, static initialisation) it prints and aborts, as in the real flavor.
#pragma once

#include <weft/sim/hooks.hpp>

#define WEFT_ASSERT(cond)                                                   \
  do {                                                                      \
    if (!(cond)) [[unlikely]]                                               \
      ::weft::sim::detail::assertion_failed(#cond, __FILE__, __LINE__);     \
  } while (false)
