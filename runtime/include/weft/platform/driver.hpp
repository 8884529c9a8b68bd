// weft/platform/driver.hpp — the event source an event loop blocks on.
//
// A driver belongs to one event loop. Its owner calls wait(deadline) when the loop has nothing
// ready; any thread calls notify() after handing the loop work. The contract:
//   * wait() returns after a notify() that happened since the previous wait() returned, or at the
//     deadline, or spuriously (the loop re-checks its queues every time);
//   * a notify() is never lost: one that races a wait() makes that wait (or the next) return;
//   * notify() is cheap when the owner is not blocked (no system call).
// The `real` flavor's io_uring driver will replace the parker-based one here; the interface is
// kept narrow (wait/notify) so that the simulated driver can stand in for either.
#pragma once

#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/parker.hpp>

namespace weft::platform {

class parker_driver {
 public:
  // Owner thread only.
  void wait(std::optional<instant> deadline) {
    if (deadline) {
      (void)parker_.park_until(*deadline);
    } else {
      parker_.park();
    }
  }
  // Any thread.
  void notify() { parker_.unpark(); }

 private:
  parker parker_;
};

using driver = parker_driver;

}  // namespace weft::platform
