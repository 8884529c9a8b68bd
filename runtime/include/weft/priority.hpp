// weft/priority.hpp — the scheduling priorities of a stealing_pool.
//
// A priority is a preference, not an order: each pool worker gives the three levels weighted
// opportunities (8:4:1 by default), so `background` work keeps running while `high` work is
// queued, only less often.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>

namespace weft {

enum class priority : std::uint8_t {
  high = 0,
  normal = 1,
  background = 2,
};

inline constexpr std::size_t priority_count = 3;

inline constexpr std::size_t index_of(priority p) noexcept { return static_cast<std::size_t>(p); }

inline constexpr const char* to_string(priority p) noexcept {
  switch (p) {
    case priority::high: return "high";
    case priority::normal: return "normal";
    case priority::background: return "background";
  }
  return "unknown";
}

}  // namespace weft
