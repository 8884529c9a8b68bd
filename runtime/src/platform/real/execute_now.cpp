// execute_now.cpp — one request as a plain system call, shared by both real backends.
//
// Control calls (socket, bind, listen, setsockopt...) never block and run here for either
// backend. The epoll backend also runs the data opcodes here once readiness says they will not
// block, and file opcodes (which readiness cannot predict) on its file thread.
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends.hpp"

extern char** environ;

namespace weft::platform {

namespace {

std::int64_t result_of(long r) noexcept { return r < 0 ? -static_cast<std::int64_t>(errno) : r; }

int open_pidfd(pid_t pid) noexcept {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

std::int64_t spawn_child(const spawn_request& s) noexcept {
  posix_spawn_file_actions_t actions;
  if (int err = posix_spawn_file_actions_init(&actions); err != 0) return -err;
  int err = 0;
  const int targets[3] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
  const int sources[3] = {s.stdin_fd, s.stdout_fd, s.stderr_fd};
  for (int i = 0; i < 3 && err == 0; ++i) {
    if (sources[i] >= 0) err = posix_spawn_file_actions_adddup2(&actions, sources[i], targets[i]);
  }
  if (err == 0 && s.working_directory != nullptr) {
    err = posix_spawn_file_actions_addchdir_np(&actions, s.working_directory);
  }
  // SIGPIPE ignored by weft (sigpipe.cpp) is weft's choice, not the child's: the child gets the
  // default back. An ignore the program set itself is inherited as exec(2) always does.
  posix_spawnattr_t attributes;
  bool have_attributes = false;
  if (err == 0 && sigpipe_ignored_by_weft()) {
    err = posix_spawnattr_init(&attributes);
    have_attributes = err == 0;
    sigset_t to_default;
    sigemptyset(&to_default);
    sigaddset(&to_default, SIGPIPE);
    if (err == 0) err = posix_spawnattr_setsigdefault(&attributes, &to_default);
    if (err == 0) err = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  }
  pid_t pid = -1;
  if (err == 0) {
    err = posix_spawnp(&pid, s.argv[0], &actions, have_attributes ? &attributes : nullptr,
                       const_cast<char* const*>(s.argv), s.envp ? const_cast<char* const*>(s.envp) : environ);
  }
  if (have_attributes) posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -err;
  if (s.pidfd_out != nullptr) {
    const int pidfd = open_pidfd(pid);
    if (pidfd < 0) {
      // No pidfd (EMFILE, say): the child could never be waited for or killed through it, so it
      // is ended and reaped here and the spawn fails with the reason.
      const int reason = errno;
      (void)::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return -reason;
    }
    *s.pidfd_out = pidfd;
  }
  return pid;
}

// waitid on a pidfd. The epoll backend makes every descriptor it watches non-blocking, a pidfd
// included, and waitid without WNOHANG on such a pidfd answers EAGAIN instead of waiting: so a
// blocking wait polls the pidfd until the child has ended, then takes its status.
std::int64_t wait_on_pidfd(int pidfd, siginfo_t* info, int flags) noexcept {
  for (;;) {
    const std::int64_t rc = result_of(::waitid(P_PIDFD, static_cast<id_t>(pidfd), info, flags));
    if (rc != -EAGAIN || (flags & WNOHANG) != 0) return rc;
    pollfd ended{pidfd, POLLIN, 0};
    if (::poll(&ended, 1, -1) < 0 && errno != EINTR) return -errno;
  }
}

}  // namespace

bool moves_bytes(io_opcode op) noexcept {
  switch (op) {
    case io_opcode::read:
    case io_opcode::write:
    case io_opcode::readv:
    case io_opcode::writev:
    case io_opcode::recv:
    case io_opcode::send:
    case io_opcode::recvmsg:
    case io_opcode::sendmsg:
    case io_opcode::accept: return true;
    default: return false;
  }
}

bool writes_bytes(io_opcode op) noexcept {
  return op == io_opcode::write || op == io_opcode::writev || op == io_opcode::send || op == io_opcode::sendmsg;
}

std::int64_t read_if_cached(const io_request& r) noexcept {
  if (r.opcode != io_opcode::read || r.offset == io_offset_current) return -EOPNOTSUPP;
  iovec v{r.data, r.size};
  // RWF_NOWAIT: the kernel answers from the page cache or says EAGAIN; it never waits for the
  // device, so the loop's thread never blocks here.
  const ssize_t n = ::preadv2(r.fd, &v, 1, static_cast<off_t>(r.offset), RWF_NOWAIT);
  if (n >= 0) return n;
  return errno == EAGAIN ? -EAGAIN : -static_cast<std::int64_t>(errno);
}

std::int64_t execute_now(const io_request& r) noexcept {
  switch (r.opcode) {
    case io_opcode::nop: return 0;
    case io_opcode::read:
      return result_of(r.offset == io_offset_current ? ::read(r.fd, r.data, r.size)
                                                     : ::pread(r.fd, r.data, r.size, static_cast<off_t>(r.offset)));
    case io_opcode::write:
      ignore_sigpipe_before_writes();
      return result_of(r.offset == io_offset_current ? ::write(r.fd, r.data, r.size)
                                                     : ::pwrite(r.fd, r.data, r.size, static_cast<off_t>(r.offset)));
    case io_opcode::readv:
      return result_of(r.offset == io_offset_current
                           ? ::readv(r.fd, static_cast<const iovec*>(r.data), static_cast<int>(r.size))
                           : ::preadv(r.fd, static_cast<const iovec*>(r.data), static_cast<int>(r.size),
                                      static_cast<off_t>(r.offset)));
    case io_opcode::writev:
      ignore_sigpipe_before_writes();
      return result_of(r.offset == io_offset_current
                           ? ::writev(r.fd, static_cast<const iovec*>(r.data), static_cast<int>(r.size))
                           : ::pwritev(r.fd, static_cast<const iovec*>(r.data), static_cast<int>(r.size),
                                       static_cast<off_t>(r.offset)));
    case io_opcode::recv: return result_of(::recv(r.fd, r.data, r.size, r.flags));
    case io_opcode::send: return result_of(::send(r.fd, r.data, r.size, r.flags | MSG_NOSIGNAL));
    case io_opcode::recvmsg: return result_of(::recvmsg(r.fd, static_cast<msghdr*>(r.data), r.flags));
    case io_opcode::sendmsg:
      return result_of(::sendmsg(r.fd, static_cast<const msghdr*>(r.data), r.flags | MSG_NOSIGNAL));
    case io_opcode::accept: return result_of(::accept4(r.fd, r.addr, r.addr_len, r.flags));
    case io_opcode::connect: return result_of(::connect(r.fd, r.addr, r.addr_size));
    case io_opcode::poll: {
      pollfd p{r.fd, static_cast<short>(r.flags), 0};
      const int n = ::poll(&p, 1, 0);
      if (n < 0) return -errno;
      return n == 0 ? -EAGAIN : p.revents;
    }
    case io_opcode::openat:
      return result_of(::openat(r.dirfd, r.path, r.flags, static_cast<mode_t>(r.mode)));
    case io_opcode::fsync:
      return result_of((r.flags & io_fsync_data_only) != 0 ? ::fdatasync(r.fd) : ::fsync(r.fd));
    case io_opcode::statx:
      return result_of(::statx(r.dirfd, r.path, r.flags, r.mode, static_cast<struct statx*>(r.data)));
    case io_opcode::ftruncate: return result_of(::ftruncate(r.fd, static_cast<off_t>(r.offset)));
    case io_opcode::unlinkat: return result_of(::unlinkat(r.dirfd, r.path, r.flags));
    case io_opcode::renameat: return result_of(::renameat(r.dirfd, r.path, r.dirfd, r.path2));
    case io_opcode::shutdown: return result_of(::shutdown(r.fd, r.flags));
    case io_opcode::socket: return result_of(::socket(r.fd, r.flags, static_cast<int>(r.mode)));
    case io_opcode::socketpair: return result_of(::socketpair(r.fd, r.flags, 0, static_cast<int*>(r.data)));
    case io_opcode::bind: return result_of(::bind(r.fd, r.addr, r.addr_size));
    case io_opcode::listen: return result_of(::listen(r.fd, static_cast<int>(r.size)));
    case io_opcode::setsockopt:
      return result_of(::setsockopt(r.fd, r.flags, static_cast<int>(r.mode), r.data, static_cast<socklen_t>(r.size)));
    case io_opcode::getsockopt: {
      socklen_t len = static_cast<socklen_t>(r.size);
      const int rc = ::getsockopt(r.fd, r.flags, static_cast<int>(r.mode), r.data, &len);
      if (rc < 0) return -errno;
      if (r.addr_len != nullptr) *r.addr_len = len;
      return 0;
    }
    case io_opcode::getsockname: return result_of(::getsockname(r.fd, r.addr, r.addr_len));
    case io_opcode::getpeername: return result_of(::getpeername(r.fd, r.addr, r.addr_len));
    case io_opcode::close: return result_of(::close(r.fd));
    case io_opcode::spawn: return spawn_child(*static_cast<const spawn_request*>(r.data));
    case io_opcode::pipe: return result_of(::pipe2(static_cast<int*>(r.data), r.flags));
    case io_opcode::waitid: return wait_on_pidfd(r.fd, static_cast<siginfo_t*>(r.data), r.flags);
    case io_opcode::kill:
#ifdef SYS_pidfd_send_signal
      return result_of(::syscall(SYS_pidfd_send_signal, r.fd, r.flags, nullptr, 0));
#else
      return -ENOSYS;
#endif
  }
  return -EINVAL;
}

}  // namespace weft::platform
