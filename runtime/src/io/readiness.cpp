// readiness.cpp — wait_readable / wait_writable.
#include <cerrno>
#include <poll.h>

#include <weft/io/readiness.hpp>

namespace weft {

namespace detail {
poll_leaf wait_ready(int fd, short events, const char* what) {
  if (fd < 0) return {-EBADF, poll_finish{}};
  io_owner owner = io_owner::current(what);
  auto op = std::make_unique<poll_op>();
  op->opcode = platform::io_opcode::poll;
  op->fd = fd;
  op->flags = events;
  return {std::move(owner), std::move(op), poll_finish{}, what};
}
}  // namespace detail

detail::poll_leaf wait_readable(int fd) { return detail::wait_ready(fd, POLLIN, "wait_readable"); }
detail::poll_leaf wait_writable(int fd) { return detail::wait_ready(fd, POLLOUT, "wait_writable"); }

}  // namespace weft
