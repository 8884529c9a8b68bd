// weft/platform/io_request.hpp — the I/O vocabulary shared by the loop and every flavor's driver.
//
// Above the seam, an I/O object (socket, file, pipe) never calls the OS: it fills an io_request
// and hands it to its loop's driver, either to run now (`execute`, for control calls that cannot
// block: socket, bind, listen, setsockopt, close) or to submit (`submit`, for anything that may
// wait). The `real` driver turns requests into io_uring SQEs or epoll-driven system calls, the
// `sim` driver into operations on the simulated network and file system, and the `model` driver
// refuses them. Results are Linux's: a count or value on success, -errno on failure.
//
// Fields a request uses, by opcode (others are ignored):
//   read, write        fd, data (bytes), size, offset (io_offset_current: the file position)
//   readv, writev      fd, data (iovec*), size (iovec count), offset
//   recv, send         fd, data, size, flags (MSG_*)
//   recvmsg, sendmsg   fd, data (msghdr*), flags
//   accept             fd, addr, addr_len (in/out; addr may be null), flags (SOCK_CLOEXEC...)
//   connect            fd, addr, addr_size
//   poll               fd, flags (POLLIN / POLLOUT mask); result is the ready mask
//   openat             dirfd (AT_FDCWD), path, flags (O_*), mode
//   fsync              fd, flags (io_fsync_data_only for fdatasync)
//   statx              dirfd, path ("" with AT_EMPTY_PATH for an fd), flags (AT_*), mode (mask),
//                      data (struct statx*)
//   ftruncate          fd, offset (new length)
//   unlinkat           dirfd, path, flags (AT_REMOVEDIR)
//   renameat           dirfd, path, path2
//   shutdown           fd, flags (SHUT_RD / SHUT_WR / SHUT_RDWR)
//   socket             domain (in fd), type (flags), protocol (mode)        [execute only]
//   socketpair         domain (in fd), type (flags), data (int[2] out)      [execute only]
//   bind, listen       fd, addr, addr_size / fd, size (backlog)             [execute only]
//   setsockopt         fd, level (flags), optname (mode), data, size        [execute only]
//   getsockopt         fd, level, optname, data, size (in: capacity; out via addr_len) [execute]
//   getsockname,
//   getpeername        fd, addr, addr_len                                   [execute only]
//   close              fd                                                   [execute only]
//   spawn              data (const spawn_request*); result is the pid, *pidfd set; a child whose
//                      pidfd cannot be opened is killed and reaped, and its error returned [execute only]
//   pipe               data (int[2] out), flags (O_CLOEXEC...)              [execute only]
//   waitid             fd (a pidfd), data (siginfo_t*), flags (WEXITED | WNOHANG); without WNOHANG
//                      it waits, also on a pidfd the driver made non-blocking [execute only]
//   kill               fd (a pidfd), flags (the signal)                     [execute only]
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <sys/socket.h>

namespace weft {

// Which driver a loop asks for. `automatic` takes io_uring where the kernel offers it and falls
// back to epoll otherwise (reporting why); the WEFT_DRIVER environment variable (epoll|io_uring)
// stands in for an explicit choice when the loop's options leave it automatic.
enum class io_driver_choice : std::uint8_t { automatic, io_uring, epoll };

// The driver a loop ended up with.
enum class io_backend : std::uint8_t { io_uring, epoll, simulated, none };

// Why a loop runs without io_uring.
enum class io_unavailable : std::uint8_t {
  kernel_lacks_io_uring,  // io_uring_setup: ENOSYS
  not_permitted,          // EPERM: seccomp, or kernel.io_uring_disabled
  resource_limit,         // ENOMEM / EMFILE / ENFILE / memlock limit while setting up the ring
  missing_opcode,         // the kernel's io_uring lacks an opcode the driver needs
  forced_by_option,       // io_driver_choice::epoll was asked for
  forced_by_environment,  // WEFT_DRIVER=epoll
};

struct io_driver_status {
  io_backend backend = io_backend::none;
  std::optional<io_unavailable> fallback_reason;  // set when io_uring was wanted but not used
  // Times the kernel's completion queue filled and completions were held back and then flushed
  // (none is lost; a high count says the ring's queue is small for the load). io_uring only.
  std::uint64_t completion_overflows = 0;
};

const char* to_string(io_backend b) noexcept;
const char* to_string(io_unavailable r) noexcept;
const char* to_string(io_driver_choice c) noexcept;

// io_uring was required (io_driver_choice::io_uring, or WEFT_DRIVER=io_uring) and cannot be had.
class io_unavailable_error : public std::runtime_error {
 public:
  io_unavailable_error(io_unavailable reason, const std::string& what)
      : std::runtime_error(what), reason_(reason) {}
  io_unavailable reason() const noexcept { return reason_; }

 private:
  io_unavailable reason_;
};

}  // namespace weft

namespace weft::platform {

enum class io_opcode : std::uint8_t {
  nop,
  read,
  write,
  readv,
  writev,
  recv,
  send,
  recvmsg,
  sendmsg,
  accept,
  connect,
  poll,
  openat,
  fsync,
  statx,
  ftruncate,
  unlinkat,
  renameat,
  shutdown,
  // execute-only control calls
  socket,
  socketpair,
  bind,
  listen,
  setsockopt,
  getsockopt,
  getsockname,
  getpeername,
  close,
  spawn,
  pipe,
  waitid,
  kill,
};

inline constexpr std::uint64_t io_offset_current = ~std::uint64_t{0};
inline constexpr int io_fsync_data_only = 1;

struct io_request {
  io_opcode opcode = io_opcode::nop;
  int fd = -1;
  int dirfd = -100;  // AT_FDCWD
  int flags = 0;
  std::uint32_t mode = 0;
  void* data = nullptr;
  std::size_t size = 0;
  std::uint64_t offset = io_offset_current;
  sockaddr* addr = nullptr;
  socklen_t addr_size = 0;
  socklen_t* addr_len = nullptr;
  const char* path = nullptr;
  const char* path2 = nullptr;
};

// A submitted request. The driver calls complete() exactly once per submit(), on the loop's own
// thread, from poll() or reap_all(); the object must stay alive (with every buffer it names) until
// then, whatever happened to the task that submitted it.
class io_operation : public io_request {
 public:
  virtual void complete(std::int64_t result) noexcept = 0;

  // The driver's own bookkeeping (a stage, list links, a result held back); nothing above the
  // seam reads or writes these.
  std::uintptr_t driver_slot = 0;
  io_operation* driver_next = nullptr;
  io_operation* driver_prev = nullptr;
  std::int64_t driver_result = 0;

 protected:
  ~io_operation() = default;
};

// What `spawn` starts: argv/envp as execve takes them (envp null: inherit), and the three standard
// descriptors of the child (-1: inherit the parent's).
struct spawn_request {
  const char* const* argv = nullptr;
  const char* const* envp = nullptr;
  const char* working_directory = nullptr;  // null: inherit
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int* pidfd_out = nullptr;  // set to a pidfd for the child (or -1 where pidfds are unavailable)
};

struct driver_options {
  io_driver_choice choice = io_driver_choice::automatic;
};

}  // namespace weft::platform
