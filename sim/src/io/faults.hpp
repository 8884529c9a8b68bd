// faults.hpp — the I/O faults the simulated kernel suffers, drawn from the run's fault stream at
// the rates of the run's options (--fault io_short=p ...), without a scheduling point.
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/platform/clock.hpp>
#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

namespace weft::sim::io {

// Whether a fault of kind `f` strikes now (recorded in the trace when it does).
inline bool strike(platform::fault f) {
  return detail::io_fault(static_cast<std::uint8_t>(f), platform::fault_name(f));
}

// The io_short fault: `n` bytes could move; a short transfer moves 1 .. n-1 of them.
inline std::size_t maybe_short(std::size_t n) {
  if (n < 2 || !strike(platform::fault::io_short)) return n;
  return 1 + static_cast<std::size_t>(detail::fault_draw(n - 1));
}

// The io_latency fault delays a completion by 1 µs .. this (uniform, whole microseconds).
inline constexpr std::uint64_t io_latency_max_us = 1'000;

// How long after it finished a completion is due: 0, or a latency under the io_latency fault.
inline duration completion_latency() {
  if (!strike(platform::fault::io_latency)) return duration::zero();
  return std::chrono::microseconds(1 + detail::fault_draw(io_latency_max_us));
}

}  // namespace weft::sim::io
