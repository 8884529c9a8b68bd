// weft/detail/thread_waker.hpp — a waker that unparks a blocked (non-loop) thread.
#pragma once

#include <cstddef>

#include <weft/platform/parker.hpp>
#include <weft/platform/sync.hpp>
#include <weft/waker.hpp>

namespace weft::detail {

// Shared between the blocked thread and every waker clone; freed by the last reference.
class thread_waker_state {
 public:
  static thread_waker_state* create() { return new thread_waker_state(); }
  waker make_waker() noexcept;
  void park() { parker_.park(); }
  void release() noexcept;

 private:
  thread_waker_state() = default;
  static const waker_vtable vtable;
  static raw_waker clone(void* data) noexcept;
  static void wake_by_ref(void* data) noexcept;
  static void drop(void* data) noexcept;

  sync::atomic<std::size_t> refs_{1};
  platform::parker parker_{platform::host_park_spin_quiet};
};

}  // namespace weft::detail
