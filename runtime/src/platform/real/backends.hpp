// backends.hpp — the real driver's backend factories (private to the real flavor's sources).
#pragma once

#include <memory>

#include <weft/platform/io_request.hpp>
#include <weft/platform/real/driver_backend.hpp>

namespace weft::platform {

// A ring for this thread, or null with *why set when io_uring cannot be used here.
std::unique_ptr<driver_backend> make_uring_backend(io_unavailable* why);
// The epoll fallback; throws std::system_error if even epoll cannot be set up (EMFILE).
std::unique_ptr<driver_backend> make_epoll_backend();

// The control calls both backends run the same way (socket, bind, listen, setsockopt, close,
// spawn...), and the synchronous form of every submitted opcode (the epoll backend's file I/O).
std::int64_t execute_now(const io_request& r) noexcept;

}  // namespace weft::platform
