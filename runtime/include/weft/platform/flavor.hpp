// weft/platform/flavor.hpp — the single switch between the build flavors.
//
// Exactly one of WEFT_FLAVOR_REAL, WEFT_FLAVOR_SIM, WEFT_FLAVOR_MODEL is defined by the build
// (meson passes it with the library's dependency). Only headers under weft/platform/ may look at
// these macros; everything above the seam names seam types and stays flavor-agnostic.
#pragma once

#if defined(WEFT_FLAVOR_REAL) + defined(WEFT_FLAVOR_SIM) + defined(WEFT_FLAVOR_MODEL) != 1
#error "exactly one of WEFT_FLAVOR_REAL, WEFT_FLAVOR_SIM, WEFT_FLAVOR_MODEL must be defined"
#endif

namespace weft::platform {

enum class flavor_kind { real, sim, model };

#if defined(WEFT_FLAVOR_REAL)
inline constexpr flavor_kind flavor = flavor_kind::real;
#elif defined(WEFT_FLAVOR_SIM)
inline constexpr flavor_kind flavor = flavor_kind::sim;
#else
inline constexpr flavor_kind flavor = flavor_kind::model;
#endif

}  // namespace weft::platform
