// weft/platform/real/clock.hpp — the OS monotonic clock.
#pragma once

#include <chrono>

namespace weft::platform {

struct clock {
  static instant now() noexcept { return std::chrono::steady_clock::now(); }  // seam-ok: the seam
};

}  // namespace weft::platform
