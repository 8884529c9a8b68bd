// weft/platform/sim/fault.hpp — fault points decided by the run's seeded fault plan.
//
// fault_point(kind) is a scheduling point; it answers true ("inject now") with the rate the run's
// options give that kind (all kinds are off by default), drawing from the run's fault stream.
#pragma once

#include <cstdint>
#include <weft/platform/source_location.hpp>

#include <weft/sim/hooks.hpp>

namespace weft::platform {

inline bool fault_point(fault kind, weft::platform::source_location loc = weft::platform::source_location::current()) noexcept {
  return sim::detail::fault_point(static_cast<std::uint8_t>(kind), fault_name(kind), loc);
}

}  // namespace weft::platform
