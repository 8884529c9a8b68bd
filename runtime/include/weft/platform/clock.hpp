// weft/platform/clock.hpp — the only source of "now" above the seam.
//
// All flavors share one time_point type (steady_clock's), so timers and deadlines are ordinary
// std::chrono values; what differs is who advances it: the OS (real) or the simulator's virtual
// clock (sim), which moves only when every simulated thread is blocked.
#pragma once

#include <weft/platform/flavor.hpp>

#include <chrono>
#include <ratio>
#include <type_traits>

namespace weft {
using duration = std::chrono::nanoseconds;
using instant = std::chrono::steady_clock::time_point;

namespace detail {
// `from + d` as a deadline, without overflow: past the clock's range it is the range's end (a
// sleep of duration::max() never ends), and a negative `d` is already due, so it is `from` itself
// (a deadline far below `from` would overflow the drivers' "deadline - now").
inline instant deadline_after(instant from, duration d) noexcept {
  if (d <= duration::zero()) return from;
  duration::rep sum = 0;
  if (__builtin_add_overflow(from.time_since_epoch().count(), d.count(), &sum)) return instant::max();
  return instant(duration(sum));
}

// Any std::chrono duration as weft's, rounded up, saturating at duration's range instead of
// overflowing (hours::max() is longer than 2^63 nanoseconds).
template <class Rep, class Period>
constexpr duration saturating_ceil(std::chrono::duration<Rep, Period> d) noexcept {
  using source = std::chrono::duration<Rep, Period>;
  if constexpr (std::is_floating_point_v<Rep>) {
    const long double ns = std::chrono::duration<long double, std::nano>(d).count();
    if (!(ns < static_cast<long double>(duration::max().count()))) return duration::max();  // NaN too
    if (ns <= static_cast<long double>(duration::min().count())) return duration::min();
    return std::chrono::ceil<duration>(d);
  } else if constexpr (std::ratio_greater_v<Period, std::nano>) {
    // Coarser than a nanosecond: compare in the source's unit, where duration's range fits.
    if (d >= std::chrono::duration_cast<source>(duration::max())) return duration::max();
    if (d <= std::chrono::duration_cast<source>(duration::min())) return duration::min();
    return std::chrono::ceil<duration>(d);
  } else {
    return std::chrono::ceil<duration>(d);  // as fine or finer: the count only shrinks
  }
}
}  // namespace detail
}  // namespace weft

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/clock.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/clock.hpp>
#else
#include <weft/platform/model/clock.hpp>
#endif
