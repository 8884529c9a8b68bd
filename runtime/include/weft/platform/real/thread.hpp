// weft/platform/real/thread.hpp — OS threads.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

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

// The CPU the calling thread runs on now, or -1 when the OS does not say: a hint, stale as soon
// as the kernel moves the thread.
inline int current_cpu() noexcept { return sched_getcpu(); }

// Logical cores the flavor offers (the default worker count of a runtime).
inline unsigned hardware_concurrency() noexcept {
  const unsigned n = std::thread::hardware_concurrency();  // seam-ok: the seam
  return n == 0 ? 1 : n;
}

// The CPUs the calling thread may run on (its affinity mask), ascending; empty when the OS does
// not say.
inline std::vector<unsigned> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Restricts the calling thread to `cpu`. Returns 0, or the OS's error number.
inline int pin_current_thread(unsigned cpu) noexcept {
  if (cpu >= CPU_SETSIZE) return EINVAL;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
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
