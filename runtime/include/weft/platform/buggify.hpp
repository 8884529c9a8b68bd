// weft/platform/buggify.hpp — fault points and coverage probes placed in user code.
//
// platform::buggify(name) answers whether the named site misbehaves now, and
// WEFT_PLATFORM_PROBE(name) counts that a place was reached. In the sim flavor both report to the
// run (weft/platform/sim/buggify.hpp); in the real and model flavors buggify is the constant
// false and a probe is nothing, so the code they guard compiles away. The public names are in
// weft/buggify.hpp.
#pragma once

#include <weft/platform/flavor.hpp>

#include <string_view>

namespace weft::platform {

// One WEFT_PLATFORM_PROBE in the source. A site is a static object: its address names it for the
// life of the program.
struct probe_site {
  const char* name;
  const char* file;
  int line;
};

}  // namespace weft::platform

#if defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/buggify.hpp>
#else
namespace weft::platform {
constexpr bool buggify(std::string_view /*name*/) noexcept { return false; }
}  // namespace weft::platform
#define WEFT_PLATFORM_PROBE(probe_name) static_cast<void>(0)
#endif
