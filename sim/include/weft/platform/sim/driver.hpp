// weft/platform/sim/driver.hpp — the sim flavor's driver: a parker on virtual time, and no I/O yet.
#pragma once

#include <weft/platform/parker_driver.hpp>

namespace weft::platform {
using driver = parker_driver;
}  // namespace weft::platform
