// sigpipe.cpp — writes to a pipe whose reader is gone fail with EPIPE instead of ending the process.
//
// A write(2) to such a pipe (or FIFO) raises SIGPIPE, whose default action ends the whole process:
// one child that exits early would take a server down. Socket sends avoid it per call
// (MSG_NOSIGNAL); plain writes have no such flag, and io_uring may issue them from the loop's
// task_work as well as from the submitting call, so no per-call signal mask covers them. Before its
// first write, the real driver therefore sets SIGPIPE's disposition to ignored, as Rust's runtime
// and Node do at start-up; a disposition the program set itself (a handler, or an ignore of its
// own) is left alone. Children spawned afterwards get the default back (spawn_child), so a
// pipeline's `head` still stops its producer the usual way.
#include <atomic>
#include <csignal>

#include "backends.hpp"

namespace weft::platform {

namespace {

// Raised before the disposition changes, so that a spawn racing the first write resets the
// child's SIGPIPE at worst needlessly (default to default), never leaves it ignored.
std::atomic<bool> changed_by_weft{false};

void ignore_if_default() noexcept {
  struct sigaction current{};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) return;
  // seq_cst (both stores): pairs with the load in sigpipe_ignored_by_weft(); the flag is up
  // before the sigaction below can take effect.
  changed_by_weft.store(true, std::memory_order_seq_cst);
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  if (::sigaction(SIGPIPE, &ignore, nullptr) != 0) changed_by_weft.store(false, std::memory_order_seq_cst);
}

}  // namespace

void ignore_sigpipe_before_writes() noexcept {
  // A function-local static: its initialisation runs once, thread-safely; later calls are a load.
  static const bool done = (ignore_if_default(), true);
  (void)done;
}

bool sigpipe_ignored_by_weft() noexcept {
  // seq_cst: pairs with the stores in ignore_if_default().
  return changed_by_weft.load(std::memory_order_seq_cst);
}

}  // namespace weft::platform
