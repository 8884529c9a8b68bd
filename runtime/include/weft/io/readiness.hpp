// weft/io/readiness.hpp — waiting for a raw descriptor to become readable or writable.
//
// For descriptors weft does not own (a library's socket, an inotify fd): the wait is a leaf
// awaitable on the current loop; dropping it cancels the wait. It answers the ready poll mask
// (POLLIN, POLLOUT, POLLHUP, POLLERR...).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <system_error>

#include <weft/expected.hpp>
#include <weft/io/detail/io_op.hpp>

namespace weft {

namespace detail {
class poll_op final : public io_op {};
struct poll_finish {
  expected<short, std::error_code> operator()(const poll_op*, std::int64_t result) const {
    if (result < 0) return unexpected(io_error_code(result));
    return static_cast<short>(result);
  }
};
using poll_leaf = io_leaf<poll_op, poll_finish>;
poll_leaf wait_ready(int fd, short events, const char* what);
}  // namespace detail

detail::poll_leaf wait_readable(int fd);
detail::poll_leaf wait_writable(int fd);

}  // namespace weft
