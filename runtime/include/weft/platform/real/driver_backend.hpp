// weft/platform/real/driver_backend.hpp — what the real driver needs of an OS event mechanism.
//
// The real driver (driver.hpp) owns the wait/notify token and the spin; a backend owns the
// kernel side: where operations go, how a sleeping owner is woken, and how completions come
// back. Two backends exist: io_uring (the default) and epoll (the fallback where io_uring is
// unavailable, or forced). Every method but wake() runs on the owner thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>

namespace weft::platform {

class driver_backend {
 public:
  virtual ~driver_backend() = default;

  // Pushes queued submissions to the kernel without waiting (so it works while the owner spins).
  virtual void flush() = 0;
  // Blocks until a completion is ready, wake() was called since the last block() returned, or the
  // deadline passes. Delivers nothing.
  virtual void block(std::optional<instant> deadline) = 0;
  // Any thread: makes the owner's current or next block() return.
  virtual void wake() noexcept = 0;

  virtual void submit(io_operation& op) = 0;
  virtual void cancel(io_operation& op) = 0;
  virtual std::int64_t execute(const io_request& r) = 0;
  // Delivers every completion that is ready (op.complete on this thread); never blocks.
  virtual std::size_t poll() = 0;
  virtual bool has_completions() const noexcept = 0;
  virtual std::size_t in_flight() const noexcept = 0;
  // Cancels everything in flight and delivers every completion; returns with in_flight() == 0.
  virtual void reap_all() = 0;
  virtual io_backend kind() const noexcept = 0;
  // Completion-queue overflows seen and recovered from (io_driver_status::completion_overflows).
  virtual std::uint64_t completion_overflows() const noexcept { return 0; }
};

}  // namespace weft::platform
