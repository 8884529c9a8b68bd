// weft/detail/io_handoff.hpp — who resumes the task and who frees an I/O operation.
//
// An operation has two parties that may finish with it, in either order and on different threads:
//   the completer  the driver delivering the result (today always on the owner thread, as the
//                  driver contract requires; the hand-off does not rely on that, so a driver may
//                  deliver from another thread without changing it);
//   the abandoner  the owner dropping the awaiting frame before the result came (task aborted,
//                  loop shut down, awaitable destroyed).
// The operation (and every staging buffer it owns, which the kernel may still be writing) is
// freed by exactly one of them: whoever comes second.
//
// Invariants of `state_` (bits only ever set, each once):
//   completed  set by complete(), after the result is stored;
//   abandoned  set by abandon().
//   * The party whose fetch_or sees the other bit already set frees; the first one never does.
//   * The waiter reads the result only after seeing `completed` (acquire), so it sees the store.
//   * After abandon() returns cancel_in_flight, the owner may still ask the driver to cancel the
//     operation: the completer has not freed it (it will, once it completes).
#pragma once

#include <cstdint>

#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class io_handoff {
 public:
  enum class after_complete { wake_waiter, free_operation };
  enum class after_abandon { free_operation, cancel_in_flight };

  // The completer, once: stores the result and says what is left to do.
  after_complete complete(std::int64_t result) noexcept {
    result_.with_mut([result](std::int64_t& r) { r = result; });
    // acq_rel. release: publishes result_ to the waiter's acquire in ready(). acquire: pairs with
    // abandon()'s release, so a completer that frees sees every write the abandoner made first.
    const std::uint32_t prior = state_.fetch_or(completed, std::memory_order_acq_rel);
    WEFT_ASSERT((prior & completed) == 0);
    return (prior & abandoned) != 0 ? after_complete::free_operation : after_complete::wake_waiter;
  }

  // The owner, at most once, instead of taking the result.
  after_abandon abandon() noexcept {
    // acq_rel. release: pairs with complete()'s acquire (the completer frees after our writes).
    // acquire: pairs with complete()'s release (we free after the completer's writes).
    const std::uint32_t prior = state_.fetch_or(abandoned, std::memory_order_acq_rel);
    WEFT_ASSERT((prior & abandoned) == 0);
    return (prior & completed) != 0 ? after_abandon::free_operation : after_abandon::cancel_in_flight;
  }

  // The waiter: has the result arrived?
  bool ready() const noexcept {
    // acquire: pairs with complete()'s release, making result_ visible.
    return (state_.load(std::memory_order_acquire) & completed) != 0;
  }
  // The waiter, after ready() returned true.
  std::int64_t result() const noexcept {
    return result_.with([](const std::int64_t& r) { return r; });
  }

 private:
  static constexpr std::uint32_t completed = 1;
  static constexpr std::uint32_t abandoned = 2;

  sync::atomic<std::uint32_t> state_{0};
  sync::cell<std::int64_t> result_{0};
};

}  // namespace weft::detail
