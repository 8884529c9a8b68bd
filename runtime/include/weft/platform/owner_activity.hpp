// weft/platform/owner_activity.hpp — what a driver's owner thread is doing, as another thread
// glimpses it (platform::driver::activity()).
//
// A hint for placement, never a guarantee: the owner may change state right after the read, and
// nothing may rely on it for correctness.
#pragma once

#include <cstdint>

namespace weft::platform {

enum class owner_activity : std::uint8_t {
  running,   // outside wait(), and nobody has notified it since it last waited
  spinning,  // idle in wait() and awake: a notify reaches it without a system call
  other,     // notified (work is on its way to it), asleep in the kernel, or not known
};

}  // namespace weft::platform
