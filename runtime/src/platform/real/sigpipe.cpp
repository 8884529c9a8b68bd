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
#include <csignal>

#include "backends.hpp"

namespace weft::platform {

namespace {

// True when this call changed the disposition (it was the default).
bool ignore_if_default() noexcept {
  struct sigaction current{};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return false;
  const bool is_default = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
  if (!is_default) return false;
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  return ::sigaction(SIGPIPE, &ignore, nullptr) == 0;
}

// Set once, by the first write of the process (a function-local static: its initialisation is
// thread-safe and every later call is one load).
bool weft_ignored() noexcept {
  static const bool changed = ignore_if_default();
  return changed;
}

}  // namespace

void ignore_sigpipe_before_writes() noexcept { (void)weft_ignored(); }

bool sigpipe_ignored_by_weft() noexcept { return weft_ignored(); }

}  // namespace weft::platform
