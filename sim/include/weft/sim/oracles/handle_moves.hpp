// weft/sim/oracles/handle_moves.hpp — oracle: a join handle's outcome goes with the handle when it
// moves, and reaches whoever awaits the handle last.
//
// The promises (join_handle.hpp): the result is delivered once, and afterwards the handle is
// empty; a moved-from handle is empty too (it names "moved from" among the empty states): not
// valid(), not is_finished(), and joining or awaiting it is a usage_error, never an outcome. And a
// handle may be polled by one party and then awaited by another (a select or timeout that polled
// it, then let it go): the joiner that polls last is the one woken at completion. A wrong waker
// kept leaves that joiner parked with nothing pending, which the engine reports as a deadlock; a
// moved-from handle that still holds the outcome is what check_moved_from() finds, at the move.
//
// A checker only: it reads the handle and reports through the context.
#pragma once

#include <weft/compiler_support.hpp>

#include <string>

#include <weft/join_error.hpp>
#include <weft/join_handle.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

// `h` was just moved from (`what` names it in the message): it must have no outcome to deliver.
template <class T>
void check_moved_from(context& sim, join_handle<T>& h, const std::string& what) {
  if (h.valid()) sim.fail("handle-move oracle: " + what + " is still valid() after it was moved from");
  if (h.is_finished()) sim.fail("handle-move oracle: " + what + " still reports is_finished() after it was moved from");
  try {
    (void)h.join();
    sim.fail("handle-move oracle: " + what + " delivered an outcome after it was moved from (delivered twice)");
  } catch (const usage_error&) {
    // The promised answer: joining an empty handle is a usage error.
  }
}

}  // namespace weft::sim::oracles
