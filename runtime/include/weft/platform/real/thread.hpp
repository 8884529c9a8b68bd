// weft/platform/real/thread.hpp — OS threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>

namespace weft::platform {

namespace detail {
inline std::uint64_t next_thread_id() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  // relaxed: ids only need to be unique, no data is published through them.
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace detail

// A small id for the calling thread, unique in the process, assigned on first use.
// (A constant-initialised thread_local, filled on first use: no initialisation guard on the hot
// path, which asks this on every wake.)
namespace detail {
inline thread_local std::uint64_t this_thread_id = 0;
}  // namespace detail
inline std::uint64_t current_thread_id() noexcept {
  std::uint64_t id = detail::this_thread_id;
  if (id == 0) [[unlikely]] {
    id = detail::next_thread_id();
    detail::this_thread_id = id;
  }
  return id;
}

// Logical cores the flavor offers (the default worker count of a runtime).
inline unsigned hardware_concurrency() noexcept {
  const unsigned n = std::thread::hardware_concurrency();  // seam-ok: the seam
  return n == 0 ? 1 : n;
}

class thread {
 public:
  thread() noexcept = default;
  // Starts fn on a new thread. Throws std::system_error when the OS refuses a thread.
  template <class F>
  explicit thread(F&& fn) : t_(std::forward<F>(fn)) {}  // seam-ok: the seam
  thread(thread&&) noexcept = default;
  thread& operator=(thread&&) noexcept = default;

  bool joinable() const noexcept { return t_.joinable(); }
  void join() { t_.join(); }
  // Lets the thread run on unowned (used only when its joiner would deadlock).
  void detach() { t_.detach(); }

 private:
  std::thread t_;  // seam-ok: the seam
};

inline void yield_thread() noexcept { std::this_thread::yield(); }

// A per-thread pointer. Each Tag names one slot.
template <class T, class Tag>
struct thread_slot {
  static T* get() noexcept { return value_; }
  static void set(T* value) noexcept { value_ = value; }

 private:
  static inline thread_local T* value_ = nullptr;
};

}  // namespace weft::platform
