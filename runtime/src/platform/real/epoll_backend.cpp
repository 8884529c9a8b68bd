// epoll_backend.cpp — the real driver's fallback backend: epoll readiness for sockets, pipes and
// other pollable descriptors, one thread for files and paths.
//
// Where a submitted operation is, from submit() until poll() or reap_all() delivers it (exactly
// one place at a time; in_flight_ counts them all):
//   parked    on its fd's readers, writers or pollers queue (FIFO per fd and direction), waiting
//             for epoll to report readiness; driver_slot holds its park_mode;
//   file      handed to the file thread (epoll_file_thread.hpp: pending, running or done);
//   ready     on ready_, its result (count, value or -errno) in driver_slot.
// Invariants:
//   * complete() runs only in deliver(), from poll() or reap_all() on the owner; submit(),
//     cancel(), execute() and block() only move operations to ready_.
//   * A descriptor is registered with epoll exactly while one of its queues is non-empty, with the
//     union of what those queues wait for (fd_state::registered, fd_state::events); data.fd names
//     it, so an event for a descriptor we no longer track is ignored, never dereferenced.
//   * A queue's head is tried before anything behind it, and a new operation joins the tail of a
//     non-empty queue without trying: readiness never reorders one direction of one descriptor.
//   * Every descriptor of the readiness kind is O_NONBLOCK from its first submission on; files are
//     left as they are. The kind is learnt once per descriptor number (fstat) and forgotten when
//     execute(close) closes it, or when the kernel hands the number out again (socket, accept,
//     openat results): whatever was parked on the old one completes with -ECANCELED.
//   * wake() writes the eventfd from any thread; its count persists until block() drains it on
//     its way out (poll() sees it but leaves it), so a wake posted at any time since block()
//     last returned ends the next block().
//   * The ready list and the fd table are owner-only: only wake() and the file thread run
//     elsewhere, and the file thread hands results back under its own lock.
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>
#include <unordered_map>

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>

#include "backends.hpp"
#include "epoll_file_thread.hpp"
#include "io_op_queue.hpp"

namespace weft::platform {

namespace {

// Events taken from the kernel per epoll wait; more stay queued there for the next wait.
constexpr int epoll_events_per_wait = 64;
// epoll_wait's timeout is an int of milliseconds; a longer wait is done in several.
constexpr std::int64_t epoll_wait_timeout_ms_max = INT_MAX;

// Why a parked operation waits, kept in its driver_slot while parked.
constexpr std::uintptr_t park_retry = 0;       // retry the same system call when ready
constexpr std::uintptr_t park_connecting = 1;  // a connect in progress: SO_ERROR is its result

// epoll and poll share bit values on Linux, so a poll opcode's mask is an epoll interest as is.
static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLPRI == POLLPRI);
static_assert(EPOLLERR == POLLERR && EPOLLHUP == POLLHUP && EPOLLRDHUP == POLLRDHUP);
static_assert(EAGAIN == EWOULDBLOCK);
constexpr std::uint32_t poll_interest_bits = EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLRDHUP;
// Reported by epoll whether asked for or not.
constexpr std::uint32_t always_reported = EPOLLERR | EPOLLHUP;

enum class route : std::uint8_t { now, file_thread, by_fd };
enum class direction : std::uint8_t { reader, writer, poller };

route route_of(io_opcode op) noexcept {
  if (moves_bytes(op) || op == io_opcode::connect || op == io_opcode::poll) return route::by_fd;
  switch (op) {
    case io_opcode::openat:
    case io_opcode::fsync:
    case io_opcode::statx:
    case io_opcode::ftruncate:
    case io_opcode::unlinkat:
    case io_opcode::renameat:
      return route::file_thread;
    default:
      return route::now;  // nop, shutdown and the control calls never wait
  }
}

direction direction_of(io_opcode op) noexcept {
  if (writes_bytes(op) || op == io_opcode::connect) return direction::writer;
  return op == io_opcode::poll ? direction::poller : direction::reader;
}

// A non-blocking attempt that found nothing to do yet (EINTR: a signal; readiness says when to retry).
bool would_block(std::int64_t result) noexcept { return result == -EAGAIN || result == -EINTR; }

// Whether the kernel just handed out `result` as a new descriptor number.
bool yields_new_fd(io_opcode op, std::int64_t result) noexcept {
  return result >= 0 && (op == io_opcode::accept || op == io_opcode::openat || op == io_opcode::socket);
}

// The descriptor numbers a successful control call handed out through its request (a pair, or a
// child's pidfd), -1 where there is none.
std::array<int, 2> new_fds_of(const io_request& r, std::int64_t result) noexcept {
  if (result < 0) return {-1, -1};
  if (r.opcode == io_opcode::socketpair || r.opcode == io_opcode::pipe) {
    const int* pair = static_cast<const int*>(r.data);
    return {pair[0], pair[1]};
  }
  if (r.opcode == io_opcode::spawn) {
    const auto& s = *static_cast<const spawn_request*>(r.data);
    return {s.pidfd_out != nullptr ? *s.pidfd_out : -1, -1};
  }
  return {-1, -1};
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

class epoll_backend final : public driver_backend {
 public:
  epoll_backend() : files_(*this) {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw_errno("epoll_create1");
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
      const int err = errno;
      ::close(epoll_fd_);
      throw std::system_error(err, std::generic_category(), "eventfd");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd_;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) < 0) {
      const int err = errno;
      ::close(wake_fd_);
      ::close(epoll_fd_);
      throw std::system_error(err, std::generic_category(), "epoll_ctl(eventfd)");
    }
  }

  ~epoll_backend() override {
    if (in_flight_ > 0) reap_all();  // the loop reaps before it lets go; this keeps "exactly once"
    files_.stop();                   // no wake() after this, so the eventfd may go
    ::close(wake_fd_);
    ::close(epoll_fd_);
  }

  epoll_backend(const epoll_backend&) = delete;
  epoll_backend& operator=(const epoll_backend&) = delete;

  // Every submission reached the kernel (or the file thread) inside submit().
  void flush() override {}

  // A file-thread result (or a notify) can land at any point relative to the owner:
  //   1. while the owner runs: the next poll() takes it; the eventfd count makes a later block()
  //      return at once, spuriously, and is drained there;
  //   2. while the driver spins: has_completions() sees the file thread's hint;
  //   3. after the check below, before or during epoll_pwait2: the eventfd is readable, so the
  //      wait returns at once or is woken.
  void block(std::optional<instant> deadline) override {
    if (has_completions()) return;
    for (;;) {
      std::optional<duration> timeout;
      if (deadline) {
        const duration left = *deadline - clock::now();
        timeout = left > duration::zero() ? left : duration::zero();
      }
      const bool woken = take_events(timeout, wake_use::drain);
      if (woken || has_completions()) return;
      // Only a timeout, a signal or readiness that came to nothing: sleep on unless the deadline
      // has really passed (the kernel's clock and ours are the same CLOCK_MONOTONIC).
      if (deadline && clock::now() >= *deadline) return;
    }
  }

  void wake() noexcept override {
    const std::uint64_t one = 1;
    // Fails only with EAGAIN when the count is at its maximum, which is still a pending wake.
    (void)!::write(wake_fd_, &one, sizeof one);
  }

  void submit(io_operation& op) override {
    op.driver_next = nullptr;
    op.driver_slot = park_retry;
    switch (route_of(op.opcode)) {
      case route::now:
        ++in_flight_;
        finish(op, execute(op));
        return;
      case route::file_thread:
        files_.enqueue(op);  // may throw before the op is counted: then it was never submitted
        ++in_flight_;
        return;
      case route::by_fd:
        break;
    }
    fd_state* st = nullptr;
    const std::int64_t known = find_or_learn(op.fd, st);
    if (known < 0) {
      ++in_flight_;
      finish(op, known);
      return;
    }
    if (st->is_file) {
      files_.enqueue(op);
      ++in_flight_;
      return;
    }
    ++in_flight_;
    start_on_fd(op, *st);
  }

  void cancel(io_operation& op) override {
    if (route_of(op.opcode) == route::by_fd) {
      auto it = fds_.find(op.fd);
      if (it != fds_.end() && queue_of(it->second, op.opcode).remove(op)) {
        WEFT_ASSERT(parked_count_ > 0);
        --parked_count_;
        finish(op, -ECANCELED);
        refresh_interest(it->first, it->second);
        return;
      }
    }
    // Not parked: if the file thread has not started it, take it back; otherwise it is running,
    // finished or already ready, and completes with its own result.
    if (files_.try_cancel(op)) finish(op, -ECANCELED);
  }

  std::int64_t execute(const io_request& r) override {
    if (r.opcode == io_opcode::close) {
      // Before the number can be reused: nothing parked on it may see the next descriptor.
      forget_fd(r.fd);
      return execute_now(r);
    }
    const std::int64_t result = execute_now(r);
    // A number weft gets from the kernel may be one whose old descriptor was closed behind the
    // driver's back (a raw fd the user waited on): what was learnt about that one is stale.
    if (yields_new_fd(r.opcode, result)) forget_fd(static_cast<int>(result));
    for (int fd : new_fds_of(r, result)) {
      if (fd >= 0) forget_fd(fd);
    }
    return result;
  }

  std::size_t poll() override {
    collect_file_results();
    if (parked_count_ > 0) (void)take_events(duration::zero(), wake_use::leave);
    return deliver();
  }

  bool has_completions() const noexcept override { return !ready_.empty() || files_.has_done(); }
  std::size_t in_flight() const noexcept override { return in_flight_; }

  // Completions may submit more; each round cancels and reaps those too.
  void reap_all() override {
    while (in_flight_ > 0) {
      cancel_all_parked();
      io_op_queue taken;
      files_.cancel_all_pending(taken);
      finish_all(taken, -ECANCELED);
      files_.wait_idle();
      collect_file_results();
      (void)deliver();
    }
  }

  io_backend kind() const noexcept override { return io_backend::epoll; }

 private:
  struct fd_state {
    bool is_file = false;     // regular file, block device or directory: the file thread's
    bool registered = false;  // in the epoll set
    std::uint32_t events = 0; // the interest registered (meaningful while `registered`)
    io_op_queue readers;
    io_op_queue writers;
    io_op_queue pollers;
  };

  static io_op_queue& queue_of(fd_state& st, io_opcode op) noexcept {
    switch (direction_of(op)) {
      case direction::reader: return st.readers;
      case direction::writer: return st.writers;
      case direction::poller: return st.pollers;
    }
    return st.readers;
  }

  void finish(io_operation& op, std::int64_t result) noexcept {
    op.driver_slot = static_cast<std::uintptr_t>(result);
    ready_.push_back(op);
  }

  void finish_all(io_op_queue& q, std::int64_t result) noexcept {
    while (io_operation* op = q.pop_front()) finish(*op, result);
  }

  // The state of `fd`, learnt on first sight: its kind (one fstat) and, for the readiness kind,
  // O_NONBLOCK. Returns 0, or -errno when the descriptor is unusable.
  std::int64_t find_or_learn(int fd, fd_state*& out) {
    if (auto it = fds_.find(fd); it != fds_.end()) {
      out = &it->second;
      return 0;
    }
    struct stat info {};
    if (::fstat(fd, &info) < 0) return -errno;
    const bool is_file = S_ISREG(info.st_mode) || S_ISBLK(info.st_mode) || S_ISDIR(info.st_mode);
    if (!is_file) {
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags < 0) return -errno;
      if ((flags & O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -errno;
    }
    out = &fds_[fd];
    out->is_file = is_file;
    return 0;
  }

  // One attempt of a parked (or new) operation without blocking.
  static std::int64_t attempt(io_operation& op) noexcept {
    if (op.driver_slot == park_connecting) {
      int error = 0;
      socklen_t len = sizeof error;
      if (::getsockopt(op.fd, SOL_SOCKET, SO_ERROR, &error, &len) < 0) return -errno;
      return -static_cast<std::int64_t>(error);
    }
    const std::int64_t result = execute_now(op);
    if (op.opcode == io_opcode::connect && result == -EINPROGRESS) {
      op.driver_slot = park_connecting;
      return -EAGAIN;
    }
    return result;
  }

  void start_on_fd(io_operation& op, fd_state& st) noexcept {
    io_op_queue& q = queue_of(st, op.opcode);
    if (q.empty()) {
      const std::int64_t result = attempt(op);
      if (!would_block(result)) {
        finish(op, result);
        return;
      }
    }
    q.push_back(op);
    ++parked_count_;
    refresh_interest(op.fd, st);
  }

  // Runs a queue from its head while its operations make progress.
  void run_queue(io_op_queue& q) noexcept {
    while (io_operation* op = q.front()) {
      const std::int64_t result = attempt(*op);
      if (would_block(result)) return;
      (void)q.pop_front();
      WEFT_ASSERT(parked_count_ > 0);
      --parked_count_;
      finish(*op, result);
    }
  }

  void on_ready(int fd, fd_state& st, std::uint32_t events) noexcept {
    // Pollers first: they report the readiness seen now, before a reader consumes it.
    io_op_queue still_waiting;
    while (io_operation* op = st.pollers.pop_front()) {
      const std::uint32_t wanted = (static_cast<std::uint32_t>(op->flags) & poll_interest_bits) | always_reported;
      if ((events & wanted) != 0) {
        --parked_count_;
        finish(*op, static_cast<std::int64_t>(events & wanted));
      } else {
        still_waiting.push_back(*op);
      }
    }
    st.pollers.splice_back(still_waiting);
    if ((events & (EPOLLIN | EPOLLPRI | EPOLLRDHUP | always_reported)) != 0) run_queue(st.readers);
    if ((events & (EPOLLOUT | always_reported)) != 0) run_queue(st.writers);
    refresh_interest(fd, st);
  }

  // Brings fd's epoll registration in line with its queues: one registration per descriptor,
  // modified as interests change, removed when every queue is empty.
  void refresh_interest(int fd, fd_state& st) noexcept {
    const bool want_registered = !st.readers.empty() || !st.writers.empty() || !st.pollers.empty();
    std::uint32_t want = 0;
    if (!st.readers.empty()) want |= EPOLLIN;
    if (!st.writers.empty()) want |= EPOLLOUT;
    for (io_operation* op = st.pollers.front(); op != nullptr; op = op->driver_next) {
      want |= static_cast<std::uint32_t>(op->flags) & poll_interest_bits;
    }
    if (!want_registered) {
      // ENOENT/EBADF here mean the kernel already dropped it with its last descriptor.
      if (st.registered) (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      st.registered = false;
      return;
    }
    if (st.registered && st.events == want) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.fd = fd;
    int rc = ::epoll_ctl(epoll_fd_, st.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
    // Our record and the kernel's disagree when the descriptor was closed behind our back
    // (the kernel dropped it) or duplicated onto the same file; converge on the kernel's view.
    if (rc < 0 && errno == ENOENT) rc = ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    if (rc < 0 && errno == EEXIST) rc = ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
    if (rc == 0) {
      st.registered = true;
      st.events = want;
      return;
    }
    // epoll refuses this descriptor (EPERM: it cannot be polled), so nothing would ever wake what
    // is parked on it: complete all of it with that error.
    const std::int64_t error = -static_cast<std::int64_t>(errno);
    parked_count_ -= st.readers.size() + st.writers.size() + st.pollers.size();
    finish_all(st.readers, error);
    finish_all(st.writers, error);
    finish_all(st.pollers, error);
    if (st.registered) (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    st.registered = false;
  }

  // Drops `fd` from epoll and every table; what was parked on it or queued for it on the file
  // thread completes with -ECANCELED.
  void forget_fd(int fd) noexcept {
    io_op_queue taken;
    files_.cancel_pending_on(fd, taken);
    finish_all(taken, -ECANCELED);
    auto it = fds_.find(fd);
    if (it == fds_.end()) return;
    fd_state& st = it->second;
    if (st.registered) (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    parked_count_ -= st.readers.size() + st.writers.size() + st.pollers.size();
    finish_all(st.readers, -ECANCELED);
    finish_all(st.writers, -ECANCELED);
    finish_all(st.pollers, -ECANCELED);
    fds_.erase(it);
  }

  void cancel_all_parked() noexcept {
    for (auto& [fd, st] : fds_) {
      if (st.registered) (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      st.registered = false;
      finish_all(st.readers, -ECANCELED);
      finish_all(st.writers, -ECANCELED);
      finish_all(st.pollers, -ECANCELED);
    }
    parked_count_ = 0;
  }

  void collect_file_results() noexcept {
    if (!files_.has_done()) return;
    files_.take_done(ready_);
  }

  // Waits up to `timeout` (none: forever) for epoll events and acts on them: parked operations
  // that can now run do, landing on ready_. Returns whether a wake() was among the events, and
  // drains it only for block(), which is about to return because of it.
  enum class wake_use : std::uint8_t { drain, leave };
  bool take_events(std::optional<duration> timeout, wake_use wakes) {
    const int n = wait_for_events(timeout);
    bool woken = false;
    for (int i = 0; i < n; ++i) {
      const int fd = events_[static_cast<std::size_t>(i)].data.fd;
      if (fd == wake_fd_) {
        std::uint64_t count = 0;
        if (wakes == wake_use::drain) (void)!::read(wake_fd_, &count, sizeof count);
        woken = true;
        continue;
      }
      auto it = fds_.find(fd);
      if (it == fds_.end()) continue;  // forgotten since the kernel queued the event
      on_ready(fd, it->second, events_[static_cast<std::size_t>(i)].events);
    }
    return woken;
  }

  // One epoll wait; 0 events on a timeout or a signal.
  int wait_for_events(std::optional<duration> timeout) {
    int n = -1;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    if (have_pwait2_) {
      timespec ts{};
      if (timeout) {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(*timeout);
        ts.tv_sec = static_cast<time_t>(secs.count());
        ts.tv_nsec = static_cast<long>((*timeout - secs).count());
      }
      n = ::epoll_pwait2(epoll_fd_, events_.data(), epoll_events_per_wait, timeout ? &ts : nullptr, nullptr);
      if (n >= 0 || errno != ENOSYS) return checked_wait(n);
      have_pwait2_ = false;  // an older kernel: milliseconds from now on
    }
#endif
    int timeout_ms = -1;
    if (timeout) {
      // Rounded up, so the wait never ends before the deadline it was computed from.
      const std::int64_t ns = timeout->count();
      const std::int64_t ms = ns / 1'000'000 + (ns % 1'000'000 != 0 ? 1 : 0);
      timeout_ms = static_cast<int>(ms < epoll_wait_timeout_ms_max ? ms : epoll_wait_timeout_ms_max);
    }
    n = ::epoll_wait(epoll_fd_, events_.data(), epoll_events_per_wait, timeout_ms);
    return checked_wait(n);
  }

  static int checked_wait(int n) {
    if (n >= 0) return n;
    if (errno == EINTR) return 0;
    throw_errno("epoll_wait");  // EBADF/EINVAL: our own descriptors are broken
  }

  // Calls complete() for everything on ready_ now; what those calls submit waits for the next
  // delivery.
  std::size_t deliver() noexcept {
    io_op_queue batch;
    batch.splice_back(ready_);
    std::size_t delivered = 0;
    while (io_operation* op = batch.pop_front()) {
      const auto result = static_cast<std::int64_t>(op->driver_slot);
      op->driver_slot = 0;
      if (yields_new_fd(op->opcode, result)) forget_fd(static_cast<int>(result));
      WEFT_ASSERT(in_flight_ > 0);
      --in_flight_;
      ++delivered;
      op->complete(result);
    }
    return delivered;
  }

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool have_pwait2_ = true;
  std::size_t in_flight_ = 0;
  std::size_t parked_count_ = 0;
  io_op_queue ready_;
  // Keyed by descriptor number; only looked up, or walked to cancel everything (reap_all).
  std::unordered_map<int, fd_state> fds_;
  std::array<epoll_event, epoll_events_per_wait> events_{};
  epoll_file_thread files_;
};

}  // namespace

std::unique_ptr<driver_backend> make_epoll_backend() { return std::make_unique<epoll_backend>(); }

}  // namespace weft::platform
