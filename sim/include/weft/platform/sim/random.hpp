// weft/platform/sim/random.hpp — seeds derived from the run's seed (never from the OS).
#pragma once

#include <cstdint>

#include <weft/sim/hooks.hpp>

namespace weft::platform {

inline std::uint64_t entropy_seed() noexcept { return sim::detail::entropy(); }

}  // namespace weft::platform
