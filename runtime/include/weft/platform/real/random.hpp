// weft/platform/real/random.hpp — seeds from OS entropy.
#pragma once

#include <cstdint>
#include <random>

namespace weft::platform {

inline std::uint64_t entropy_seed() noexcept {
  std::random_device device;  // seam-ok: the seam
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

}  // namespace weft::platform
