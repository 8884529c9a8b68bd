// weft/platform/random.hpp — seeded pseudo-random numbers for the runtime.
//
// The generator is the same in every flavor (xoshiro256**, seeded through splitmix64) so that a
// seed means the same sequence everywhere. Only where the *seed* comes from is flavor-specific:
// platform::entropy_seed() reads the OS in real and derives from the run's seed in sim.
#pragma once

#include <weft/platform/flavor.hpp>

#include <cstdint>

namespace weft::platform {

class random {
 public:
  explicit random(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& word : state_) word = splitmix64(x);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound); bound must be positive. Lemire's multiply-shift, without the
  // rejection step: the bias is below 2^-32 for the bounds the runtime uses.
  std::uint64_t below(std::uint64_t bound) noexcept {
    // __extension__: the 128-bit product is a GCC/Clang extension; without the marker every
    // consumer built with -Wpedantic -Werror fails to compile this header.
    __extension__ typedef unsigned __int128 wide;
    return static_cast<std::uint64_t>((static_cast<wide>(next()) * bound) >> 64);
  }

  // True with probability numerator / denominator.
  bool chance(std::uint64_t numerator, std::uint64_t denominator) noexcept {
    return below(denominator) < numerator;
  }

  static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace weft::platform

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/random.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/random.hpp>
#else
#include <weft/platform/model/random.hpp>
#endif
