// endpoint.hpp — one driver's side of the simulated kernel: its wake-up parker and the
// completions the kernel has decided for its operations.
//
// An operation submitted through a driver is, until its complete() runs, either
//   waiting    in a queue of the kernel object it waits on (world.hpp), result not known yet, or
//   scheduled  here: its result is known and it is delivered once virtual time reaches `due`.
// `in_flight` counts both. Only the owner thread delivers (poll, reap_all); any simulated thread
// may schedule a completion here (a peer's send satisfying this loop's recv) and then unparks
// the owner, so a wait() bounded by the earliest `due` is recomputed.
//
// Order of delivery: (due, sequence), except that the `io_reorder` fault may pick another ready
// completion first, never one whose channel (a stream socket's direction) has an earlier ready
// completion: bytes of a stream are delivered in the order they moved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/platform/parker.hpp>

namespace weft::sim::io {

// A completion channel: operations on one channel complete in the order they took effect.
// 0: none (the operation is independent of every other).
using channel_id = std::uint64_t;
inline constexpr channel_id no_channel = 0;

struct scheduled_completion {
  instant due;
  std::uint64_t sequence = 0;  // the world's scheduling rank: ties in `due` keep that order
  channel_id channel = no_channel;
  platform::io_operation* op = nullptr;
  std::int64_t result = 0;
  std::uint64_t message = 0;  // the message from another host it delivers (traces), or 0
};

class endpoint {
 public:
  endpoint() = default;
  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  platform::parker& parker() noexcept { return parker_; }

  void submitted() noexcept { ++in_flight_; }
  std::size_t in_flight() const noexcept { return in_flight_; }

  // The kernel decided `c`'s result; it is delivered at c.due or later.
  void schedule(const scheduled_completion& c);
  // The earliest due time, if anything is scheduled.
  std::optional<instant> next_due() const noexcept;
  bool has_ready(instant now) const noexcept { return !scheduled_.empty() && scheduled_.front().due <= now; }
  // Removes and returns the next completion to deliver among those due by `now` (all of them
  // with `everything`), or nothing. Asks the io_reorder fault when several could go first.
  std::optional<scheduled_completion> take_next(instant now, bool everything);
  bool has_scheduled() const noexcept { return !scheduled_.empty(); }

 private:
  platform::parker parker_;
  std::vector<scheduled_completion> scheduled_;  // sorted by (due, sequence)
  std::size_t in_flight_ = 0;
};

}  // namespace weft::sim::io
