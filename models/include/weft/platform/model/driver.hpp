// weft/platform/model/driver.hpp — the model flavor's driver: a parker, and no I/O.
#pragma once

#include <weft/platform/parker_driver.hpp>

namespace weft::platform {
using driver = parker_driver;
}  // namespace weft::platform
