// weft/platform/parker_driver.hpp — a driver with no I/O: a parker to wait on, nothing to submit.
//
// The `model` flavor's driver (the model checker explores wakes, not system calls). Its wait and
// notify keep the driver contract (driver.hpp); its I/O half refuses every request with -ENOSYS,
// so code above the seam sees an ordinary, typed "not supported" error.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/platform/owner_activity.hpp>
#include <weft/platform/parker.hpp>

namespace weft::platform {

class parker_driver {
 public:
  parker_driver() = default;
  explicit parker_driver(const driver_options&) {}

  // Owner thread only.
  void wait(std::optional<instant> deadline) {
    if (deadline) {
      (void)parker_.park_until(*deadline);
    } else {
      parker_.park();
    }
  }
  // Any thread.
  void notify() { parker_.unpark(); }
  // Any thread, a hint (driver.hpp): not tracked here.
  owner_activity activity() const noexcept { return owner_activity::other; }
  int owner_cpu() const noexcept { return -1; }

  // I/O half (owner thread). A refused submission still completes exactly once, at the next poll.
  void submit(io_operation& op) {
    op.driver_next = nullptr;
    if (refused_tail_) {
      refused_tail_->driver_next = &op;
    } else {
      refused_head_ = &op;
    }
    refused_tail_ = &op;
    ++in_flight_;
  }
  void cancel(io_operation&) noexcept {}
  std::int64_t execute(const io_request&) noexcept { return -ENOSYS; }
  std::int64_t try_now(const io_request&) noexcept { return -ENOSYS; }
  std::size_t poll() noexcept {
    std::size_t delivered = 0;
    while (io_operation* op = refused_head_) {
      refused_head_ = op->driver_next;
      if (!refused_head_) refused_tail_ = nullptr;
      --in_flight_;
      ++delivered;
      op->complete(-ENOSYS);
    }
    return delivered;
  }
  bool has_completions() const noexcept { return refused_head_ != nullptr; }
  std::size_t in_flight() const noexcept { return in_flight_; }
  void reap_all() noexcept { (void)poll(); }
  io_driver_status status() const noexcept { return {io_backend::none, std::nullopt}; }

 private:
  parker parker_;
  io_operation* refused_head_ = nullptr;
  io_operation* refused_tail_ = nullptr;
  std::size_t in_flight_ = 0;
};

}  // namespace weft::platform
