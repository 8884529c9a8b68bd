// weft/platform/real/sync.hpp — production meaning of the sync vocabulary: std types, zero cost.
// The source_location parameters of the other flavors are omitted here; call sites never pass
// them, so the same source compiles against every flavor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <utility>

#include <weft/platform/clock.hpp>

namespace weft::sync {

template <class T>
class atomic {
 public:
  constexpr atomic() noexcept : value_{} {}
  constexpr explicit atomic(T initial) noexcept : value_{initial} {}
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order order) const noexcept { return value_.load(order); }
  void store(T desired, std::memory_order order) noexcept { value_.store(desired, order); }
  T exchange(T desired, std::memory_order order) noexcept { return value_.exchange(desired, order); }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                             std::memory_order failure) noexcept {
    return value_.compare_exchange_weak(expected, desired, success, failure);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                               std::memory_order failure) noexcept {
    return value_.compare_exchange_strong(expected, desired, success, failure);
  }
  T fetch_add(T arg, std::memory_order order) noexcept { return value_.fetch_add(arg, order); }
  T fetch_sub(T arg, std::memory_order order) noexcept { return value_.fetch_sub(arg, order); }
  T fetch_or(T arg, std::memory_order order) noexcept { return value_.fetch_or(arg, order); }
  T fetch_and(T arg, std::memory_order order) noexcept { return value_.fetch_and(arg, order); }

 private:
  std::atomic<T> value_;
};

inline void fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }

// Non-atomic data shared between threads under some protocol (a lock, a state-word bit). The
// protocol is the caller's; the cell only makes every access visible to the model checker.
template <class T>
class cell {
 public:
  template <class... Args>
  explicit cell(Args&&... args) : value_(std::forward<Args>(args)...) {}
  cell(const cell&) = delete;
  cell& operator=(const cell&) = delete;

  template <class F>
  decltype(auto) with(F&& f) const {
    return std::forward<F>(f)(static_cast<const T&>(value_));
  }
  template <class F>
  decltype(auto) with_mut(F&& f) {
    return std::forward<F>(f)(value_);
  }

 private:
  T value_;
};

class mutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() { return m_.try_lock(); }
  void unlock() { m_.unlock(); }

 private:
  friend class condvar;
  std::mutex m_;
};

template <class M>
using lock_guard = std::lock_guard<M>;
template <class M>
using unique_lock = std::unique_lock<M>;

// std::condition_variable over the std::mutex inside sync::mutex (adopted for the wait, then
// released back to the caller's lock, which still owns it).
class condvar {
 public:
  void wait(unique_lock<mutex>& lock) {
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    cv_.wait(inner);
    inner.release();
  }
  // Returns false when the deadline passed (the caller re-checks its predicate either way).
  bool wait_until(unique_lock<mutex>& lock, instant deadline) {
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    const auto status = cv_.wait_until(inner, deadline);
    inner.release();
    return status == std::cv_status::no_timeout;
  }
  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace weft::sync
