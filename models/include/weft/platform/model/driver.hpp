// weft/platform/model/driver.hpp — the model flavor's driver: a parker, and no I/O.
#pragma once

#include <weft/platform/parker_driver.hpp>

namespace weft::platform {
using driver = parker_driver;
// The simulator's buffer-lifetime check (driver.hpp): the model has no kernel to hold operations.
inline void io_operation_freed(const io_operation&) noexcept {}
}  // namespace weft::platform
