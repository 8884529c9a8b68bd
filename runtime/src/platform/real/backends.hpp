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

// Operations that move bytes through a descriptor (or accept on one): on a non-blocking
// descriptor they may find nothing to do yet, and readiness says when to try again.
bool moves_bytes(io_opcode op) noexcept;
// Of those, the ones that write: they wait for the descriptor to be writable, the rest readable.
bool writes_bytes(io_opcode op) noexcept;

// The control calls both backends run the same way (socket, bind, listen, setsockopt, close,
// spawn...), and the synchronous form of every submitted opcode (the epoll backend's file I/O).
std::int64_t execute_now(const io_request& r) noexcept;

// Before any write(2)/writev(2) of the process: SIGPIPE's default disposition becomes ignored,
// so a pipe with no reader answers EPIPE (sigpipe.cpp). Cheap after the first call.
void ignore_sigpipe_before_writes() noexcept;
// Whether that changed the disposition (then children get the default back at spawn). Only asks:
// a spawn before any write changes nothing.
bool sigpipe_ignored_by_weft() noexcept;

}  // namespace weft::platform
