// weft/platform/sim/sync.hpp — the sync vocabulary in the simulator.
//
// All simulated threads are fibers on one OS thread, so every operation here is trivially atomic;
// what matters is *where the scheduler may switch*. Every operation is a yield point (before the
// operation takes effect): the seeded strategy may run another fiber there, which is how the
// simulator explores interleavings. Memory orders are accepted and ignored — the sim explores
// interleavings under sequential consistency; weak-memory behaviour is the model flavor's job.
// Each operation takes a trailing weft::platform::source_location so the trace names the production call
// site; call sites never pass it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <weft/platform/source_location.hpp>
#include <utility>

#include <weft/sim/hooks.hpp>

namespace weft::sync {

using weft::platform::source_location;

template <class T>
class atomic {
 public:
  constexpr atomic() noexcept : value_{} {}
  constexpr explicit atomic(T initial) noexcept : value_{initial} {}
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order, source_location loc = source_location::current()) const noexcept {
    sim::detail::yield_point("atomic.load", loc);
    return value_;
  }
  void store(T desired, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.store", loc);
    value_ = desired;
  }
  T exchange(T desired, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.exchange", loc);
    return std::exchange(value_, desired);
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order, std::memory_order,
                             source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.cas_weak", loc);
    return cas(expected, desired);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order, std::memory_order,
                               source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.cas", loc);
    return cas(expected, desired);
  }
  T fetch_add(T arg, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.fetch_add", loc);
    return std::exchange(value_, static_cast<T>(value_ + arg));
  }
  T fetch_sub(T arg, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.fetch_sub", loc);
    return std::exchange(value_, static_cast<T>(value_ - arg));
  }
  T fetch_or(T arg, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.fetch_or", loc);
    return std::exchange(value_, static_cast<T>(value_ | arg));
  }
  T fetch_and(T arg, std::memory_order, source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("atomic.fetch_and", loc);
    return std::exchange(value_, static_cast<T>(value_ & arg));
  }

 private:
  bool cas(T& expected, T desired) noexcept {
    if (value_ == expected) {
      value_ = desired;
      return true;
    }
    expected = value_;
    return false;
  }
  T value_;
};

inline void fence(std::memory_order, source_location loc = source_location::current()) noexcept {
  sim::detail::yield_point("fence", loc);
}

// Non-atomic shared data: every access is a yield point, so a protocol that reads a cell, lets
// another thread in, and acts on the stale value is explored.
template <class T>
class cell {
 public:
  template <class... Args>
  explicit cell(Args&&... args) : value_(std::forward<Args>(args)...) {}
  cell(const cell&) = delete;
  cell& operator=(const cell&) = delete;

  template <class F>
  decltype(auto) with(F&& f, source_location loc = source_location::current()) const {
    sim::detail::yield_point("cell.read", loc);
    return std::forward<F>(f)(static_cast<const T&>(value_));
  }
  template <class F>
  decltype(auto) with_mut(F&& f, source_location loc = source_location::current()) {
    sim::detail::yield_point("cell.write", loc);
    return std::forward<F>(f)(value_);
  }

 private:
  T value_;
};

// A fiber mutex. Not recursive; unlock by a fiber that does not hold it is reported as a failure.
class mutex {
 public:
  mutex() = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  void lock(source_location loc = source_location::current()) {
    sim::detail::yield_point("mutex.lock", loc);
    if (locked_ && owner_ == sim::detail::current_fiber_id()) {
      sim::detail::report_failure("mutex locked twice by the same thread (self-deadlock)", loc);
    }
    while (locked_) sim::detail::wait(waiters_, "mutex.lock", loc, nullptr);
    locked_ = true;
    owner_ = sim::detail::current_fiber_id();
  }
  bool try_lock(source_location loc = source_location::current()) {
    sim::detail::yield_point("mutex.try_lock", loc);
    if (locked_) return false;
    locked_ = true;
    owner_ = sim::detail::current_fiber_id();
    return true;
  }
  void unlock(source_location loc = source_location::current()) {
    if (!locked_ || owner_ != sim::detail::current_fiber_id()) {
      sim::detail::report_failure("mutex unlocked by a thread that does not hold it", loc);
    }
    locked_ = false;
    sim::detail::notify_one(waiters_);
    sim::detail::yield_point("mutex.unlock", loc);
  }

 private:
  friend class condvar;
  bool locked_ = false;
  std::uint64_t owner_ = 0;
  sim::detail::wait_list waiters_;
};

// Scoped locks that remember the caller's site (std's would report a libstdc++ line).
template <class M>
class lock_guard {
 public:
  explicit lock_guard(M& m, source_location loc = source_location::current()) : m_(m), loc_(loc) {
    m_.lock(loc_);
  }
  ~lock_guard() { m_.unlock(loc_); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  M& m_;
  source_location loc_;
};

template <class M>
class unique_lock {
 public:
  unique_lock() noexcept = default;
  explicit unique_lock(M& m, source_location loc = source_location::current()) : m_(&m), loc_(loc) {
    m_->lock(loc_);
    owns_ = true;
  }
  unique_lock(M& m, std::defer_lock_t, source_location loc = source_location::current()) noexcept
      : m_(&m), loc_(loc) {}
  unique_lock(unique_lock&& other) noexcept
      : m_(std::exchange(other.m_, nullptr)), owns_(std::exchange(other.owns_, false)), loc_(other.loc_) {}
  unique_lock& operator=(unique_lock&& other) noexcept {
    if (this != &other) {
      if (owns_) m_->unlock(loc_);
      m_ = std::exchange(other.m_, nullptr);
      owns_ = std::exchange(other.owns_, false);
      loc_ = other.loc_;
    }
    return *this;
  }
  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;
  ~unique_lock() {
    if (owns_) m_->unlock(loc_);
  }

  void lock(source_location loc = source_location::current()) {
    m_->lock(loc);
    owns_ = true;
  }
  bool try_lock(source_location loc = source_location::current()) {
    owns_ = m_->try_lock(loc);
    return owns_;
  }
  void unlock(source_location loc = source_location::current()) {
    owns_ = false;
    m_->unlock(loc);
  }
  M* release() noexcept {
    owns_ = false;
    return std::exchange(m_, nullptr);
  }
  M* mutex() const noexcept { return m_; }
  bool owns_lock() const noexcept { return owns_; }
  explicit operator bool() const noexcept { return owns_; }

 private:
  M* m_ = nullptr;
  bool owns_ = false;
  source_location loc_{};
};

// A condition variable whose timed wait runs on the simulator's virtual clock (the engine's own
// timer list — never Boost.Fiber's real-clock waits).
class condvar {
 public:
  condvar() = default;
  condvar(const condvar&) = delete;
  condvar& operator=(const condvar&) = delete;

  void wait(unique_lock<mutex>& lock, source_location loc = source_location::current()) {
    wait_impl(lock, nullptr, loc);
  }
  // Returns false when the deadline passed (the caller re-checks its predicate either way).
  bool wait_until(unique_lock<mutex>& lock, std::chrono::steady_clock::time_point deadline,
                  source_location loc = source_location::current()) {
    return wait_impl(lock, &deadline, loc) == sim::detail::wake_reason::notified;
  }
  void notify_one(source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("condvar.notify_one", loc);
    sim::detail::notify_one(waiters_);
  }
  void notify_all(source_location loc = source_location::current()) noexcept {
    sim::detail::yield_point("condvar.notify_all", loc);
    sim::detail::notify_all(waiters_);
  }

 private:
  sim::detail::wake_reason wait_impl(unique_lock<mutex>& lock,
                                     const std::chrono::steady_clock::time_point* deadline,
                                     source_location loc) {
    mutex* m = lock.mutex();
    if (m == nullptr || !lock.owns_lock()) {
      sim::detail::report_failure("condvar wait without holding the lock", loc);
    }
    // A scheduling point first, with the mutex still held: a real waiter spends time between
    // its last check of the condition and its enqueue, and a notify sent then without the
    // mutex is lost. Without this point a check that reads an atomic (a yield, then the read)
    // and the enqueue would run as one step, and such lost wake-ups could never happen here.
    sim::detail::yield_point("condvar.wait", loc);
    // Release the mutex and enqueue in one step (no yield in between: that is the atomicity a
    // condition variable promises), then block; re-acquire after the wake.
    m->locked_ = false;
    sim::detail::notify_one(m->waiters_);
    const sim::detail::wake_reason why = sim::detail::wait(waiters_, "condvar.wait", loc, deadline);
    m->lock(loc);
    return why;
  }

  sim::detail::wait_list waiters_;
};

}  // namespace weft::sync
