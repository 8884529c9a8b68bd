// endpoint.cpp — a driver's scheduled completions and the order they are delivered in.
#include "endpoint.hpp"

#include <algorithm>

#include <weft/platform/assert.hpp>
#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

namespace weft::sim::io {

namespace {
bool earlier(const scheduled_completion& a, const scheduled_completion& b) noexcept {
  return a.due != b.due ? a.due < b.due : a.sequence < b.sequence;
}
}  // namespace

void endpoint::schedule(const scheduled_completion& c) {
  WEFT_ASSERT(c.op != nullptr);
  scheduled_.insert(std::upper_bound(scheduled_.begin(), scheduled_.end(), c, &earlier), c);
}

std::optional<instant> endpoint::next_due() const noexcept {
  if (scheduled_.empty()) return std::nullopt;
  return scheduled_.front().due;
}

std::optional<scheduled_completion> endpoint::take_next(instant now, bool everything) {
  if (scheduled_.empty() || (!everything && scheduled_.front().due > now)) return std::nullopt;
  std::size_t pick = 0;
  // Candidates for going first: ready, and the first ready one of their channel.
  std::vector<std::size_t> candidates;
  std::vector<channel_id> seen;
  for (std::size_t i = 0; i < scheduled_.size(); ++i) {
    const scheduled_completion& c = scheduled_[i];
    if (!everything && c.due > now) break;
    if (c.channel != no_channel) {
      if (std::find(seen.begin(), seen.end(), c.channel) != seen.end()) continue;
      seen.push_back(c.channel);
    }
    candidates.push_back(i);
  }
  constexpr auto reorder = static_cast<std::uint8_t>(platform::fault::io_reorder);
  if (candidates.size() > 1 && detail::io_fault(reorder, platform::fault_name(platform::fault::io_reorder))) {
    pick = candidates[1 + detail::fault_draw(candidates.size() - 1)];
  }
  const scheduled_completion c = scheduled_[pick];
  scheduled_.erase(scheduled_.begin() + static_cast<std::ptrdiff_t>(pick));
  WEFT_ASSERT(in_flight_ > 0);
  --in_flight_;
  return c;
}

}  // namespace weft::sim::io
