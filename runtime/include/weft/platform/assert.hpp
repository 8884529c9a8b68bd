// weft/platform/assert.hpp — always-on assertions.
//
// WEFT_ASSERT(cond) checks a precondition, postcondition or invariant in every build type (the
// cost is a predictable branch). A failure prints the condition and its place and aborts; in the
// model flavor it is a Relacy assertion, so the checker reports the interleaving that broke it.
// In the sim flavor, inside a simulated run, it fails that run only (assertion text and site in
// the report, the run's fibers abandoned as after a deadlock) so a fuzz campaign goes on.
// Split compound conditions into separate asserts so a failure names the part that broke.
#pragma once

#include <weft/platform/flavor.hpp>

#if defined(WEFT_FLAVOR_MODEL)
#include <weft/platform/model/assert.hpp>
#else
namespace weft::platform {
[[noreturn]] void assert_failed(const char* condition, const char* file, int line) noexcept;
}  // namespace weft::platform
#if defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/assert.hpp>
#else
#define WEFT_ASSERT(cond)                                                   \
  do {                                                                      \
    if (!(cond)) [[unlikely]]                                               \
      ::weft::platform::assert_failed(#cond, __FILE__, __LINE__);           \
  } while (false)
#endif
#endif
