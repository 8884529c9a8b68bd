// weft/queue_error.hpp — why a submission was refused.
#pragma once

#include <weft/compiler_support.hpp>

#include <weft/expected.hpp>

namespace weft {

enum class queue_error {
  full,    // the bounded queue is at capacity now; retrying later may succeed
  closed,  // the receiver no longer accepts work; retrying will not succeed
};

inline constexpr const char* to_string(queue_error e) noexcept {
  return e == queue_error::full ? "full" : "closed";
}

// The answer of every cross-thread submission: accepted, or refused with the reason. Refused work
// is destroyed without running, on the submitting thread, before the call returns.
using submit_result = expected<void, queue_error>;

}  // namespace weft
