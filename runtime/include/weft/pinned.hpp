// weft/pinned.hpp — a value that belongs to the thread that made it.
//
// State a pinned worker (or a loop, or a local domain's host thread) keeps for itself — a cache,
// a non-thread-safe handle — can be captured by accident into work that runs elsewhere: a
// stealing_pool task, a blocking callback, another worker. Wrapped in pinned<T>, every access
// checks the thread and throws usage_error off the owner thread, so the mistake is a clear error
// at the first touch instead of a data race. The value itself may be moved between threads (the
// wrapper can travel inside a capture); only its use is checked.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <utility>

#include <weft/join_error.hpp>
#include <weft/platform/thread.hpp>

namespace weft {

template <class T>
class pinned {
 public:
  template <class... Args>
  explicit pinned(Args&&... args) : owner_(platform::current_thread_id()), value_(std::forward<Args>(args)...) {}

  // The value, on its owner thread; usage_error anywhere else.
  T& get() {
    check();
    return value_;
  }
  const T& get() const {
    check();
    return value_;
  }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }
  T& operator*() { return get(); }
  const T& operator*() const { return get(); }

  bool on_owner_thread() const noexcept { return platform::current_thread_id() == owner_; }

 private:
  void check() const {
    if (!on_owner_thread()) {
      throw usage_error("weft::pinned value used off the thread that owns it (a pinned worker's state "
                        "captured into work that runs elsewhere, such as a stealing_pool task)");
    }
  }

  std::uint64_t owner_;
  T value_;
};

}  // namespace weft
