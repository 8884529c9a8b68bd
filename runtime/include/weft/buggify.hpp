// weft/buggify.hpp — fault points and coverage probes in a service's own code.
//
//   if (weft::sim::buggify("wal.short_write")) n = n / 2;   // misbehave here, sometimes
//   WEFT_SIM_PROBE("wal.recovered_torn_tail");              // count that this was reached
//
// buggify(name) is true only in the simulator, and there only when the run enables the
// `buggify` fault kind (`--fault buggify=P`, or a `--swarm` mix): then each named site is active
// in a given run or not, decided by the seed and the name, and an active site answers true with
// probability P. It is never a scheduling point, so a site that stays quiet changes nothing in a
// run. In a production (real) build it is the constant false and the branch it guards is
// dropped.
//
// WEFT_SIM_PROBE(name) counts that a place was reached. In the simulator every probe linked into
// the program is known before the first run, so a campaign reports how many runs reached each
// and lists the probes no run reached: the places the fuzzing never got to. In a production build
// a probe is nothing. `name` must be a string literal.
#pragma once

#include <weft/compiler_support.hpp>

#include <weft/platform/buggify.hpp>

#include <string_view>

namespace weft::sim {

// True when the site `name` misbehaves now (see above); always false outside the simulator.
inline bool buggify(std::string_view name) noexcept { return platform::buggify(name); }

}  // namespace weft::sim

#define WEFT_SIM_PROBE(name) WEFT_PLATFORM_PROBE(name)
