// weft/thread_handle.hpp — a sendable handle for queueing macrotasks onto one event loop.
//
// Copy it to any thread. queue_macrotask answers at once: accepted, `full` (the loop's remote
// inbox is at capacity; try again later) or `closed` (the loop finished run() or is gone). It
// never blocks and never drops work silently: refused work is destroyed unrun, on the calling
// thread, before the call returns. A handle does not keep its loop alive or running.
#pragma once

#include <weft/compiler_support.hpp>

#include <type_traits>
#include <utility>

#include <weft/detail/loop_shared.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/queue_error.hpp>

namespace weft {

class thread_handle {
 public:
  thread_handle() noexcept = default;
  explicit thread_handle(detail::loop_shared* shared) noexcept : shared_(shared) {
    if (shared_) shared_->ref_inc();
  }
  thread_handle(const thread_handle& other) noexcept : thread_handle(other.shared_) {}
  thread_handle(thread_handle&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)) {}
  thread_handle& operator=(thread_handle other) noexcept {
    std::swap(shared_, other.shared_);
    return *this;
  }
  ~thread_handle() {
    if (shared_) shared_->release();
  }

  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  submit_result queue_macrotask(F&& fn) const {
    if (!shared_) return unexpected(queue_error::closed);
    return shared_->submit_user(new detail::callback_runnable<std::decay_t<F>>(std::forward<F>(fn)));
  }

  // True on the thread that owns the loop.
  bool is_current() const noexcept { return shared_ && shared_->on_owner_thread(); }
  bool valid() const noexcept { return shared_ != nullptr; }
  std::size_t inbox_capacity() const noexcept { return shared_ ? shared_->inbox.capacity() : 0; }

  friend bool operator==(const thread_handle& a, const thread_handle& b) noexcept { return a.shared_ == b.shared_; }

  detail::loop_shared* shared() const noexcept { return shared_; }

 private:
  detail::loop_shared* shared_ = nullptr;
};

}  // namespace weft
