// weft/detail/delayed_notification.hpp — the simulator's stand-in for a thread descheduled
// between queueing work for another thread and notifying that thread.
//
// A cross-thread wake is two steps: the push into the target's queue, then the notification of
// its driver or parker. Between them the target may already take the work, run it and let go of
// everything the pusher reached it through. The `delayed_wake` fault holds the pusher back there
// for a run of explicit yields, long enough for the target to run to its teardown, so the
// simulator meets that window; in the real and model flavors this is nothing.
#pragma once

#include <weft/platform/fault.hpp>
#include <weft/platform/thread.hpp>

namespace weft::detail {

// Yields given up by a delayed notifier: each lets another thread run at least one step.
inline constexpr int delayed_notification_yields = 64;

inline void maybe_delay_notification() noexcept {
  if (WEFT_FAULT_POINT(delayed_wake)) {
    for (int i = 0; i < delayed_notification_yields; ++i) platform::yield_thread();
  }
}

}  // namespace weft::detail
