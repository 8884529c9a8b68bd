// weft/platform/model/sync.hpp — the sync vocabulary over Relacy, so the model checker sees every
// shared access of the production code.
//
//   sync::atomic<T>  rl::atomic<T>; each operation's memory order is the production one, and the
//                    trailing weft::platform::source_location (defaulted, so call sites are unchanged) becomes
//                    the rl::debug_info Relacy prints: reports name the production line.
//   sync::fence      rl::atomic_thread_fence.
//   sync::cell<T>    the value itself plus a shadow rl::var: with() is a Relacy read of the shadow,
//                    with_mut() a Relacy write. Relacy therefore reports a DATA RACE when two
//                    accesses, one of them with_mut(), are not ordered by happens-before — e.g. a
//                    relaxed publication of the data through an atomic flag. (The value is not kept
//                    inside rl::var because rl::var copies its value on every load; cells hold
//                    queues, wakers and optionals.)
//   sync::mutex      rl::mutex (plain, non-recursive: re-locking is reported).
//   sync::condvar    rl::condition_variable, which may wake spuriously (the production code must
//                    re-check). wait_until() is a Relacy timed wait: the checker may time it out at
//                    any point; the deadline's value is ignored (see model/clock.hpp).
//   lock_guard / unique_lock  small RAII types that pass their construction site to Relacy.
#pragma once

#include <weft/platform/source_location.hpp>
#include <utility>

#include <weft/platform/clock.hpp>
#include <weft/platform/model/relacy.hpp>

namespace weft::sync {

using loc_t = weft::platform::source_location;

inline void fence(std::memory_order order, loc_t loc = loc_t::current()) {
  rl::atomic_thread_fence(platform::model::order(order), platform::model::site(loc));
}

template <class T>
class atomic {
 public:
  atomic() : value_(T{}) {}
  explicit atomic(T initial) : value_(initial) {}
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order order, loc_t loc = loc_t::current()) const {
    return value_(platform::model::site(loc)).load(platform::model::order(order));
  }
  void store(T desired, std::memory_order order, loc_t loc = loc_t::current()) {
    value_(platform::model::site(loc)).store(desired, platform::model::order(order));
  }
  T exchange(T desired, std::memory_order order, loc_t loc = loc_t::current()) {
    return value_(platform::model::site(loc)).exchange(desired, platform::model::order(order));
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                             loc_t loc = loc_t::current()) {
    return compare_exchange<true>(expected, desired, success, failure, loc);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               loc_t loc = loc_t::current()) {
    return compare_exchange<false>(expected, desired, success, failure, loc);
  }
  T fetch_add(T arg, std::memory_order order, loc_t loc = loc_t::current()) {
    return value_(platform::model::site(loc)).fetch_add(arg, platform::model::order(order));
  }
  T fetch_sub(T arg, std::memory_order order, loc_t loc = loc_t::current()) {
    return value_(platform::model::site(loc)).fetch_sub(arg, platform::model::order(order));
  }
  T fetch_or(T arg, std::memory_order order, loc_t loc = loc_t::current()) {
    return value_(platform::model::site(loc)).fetch_or(arg, platform::model::order(order));
  }
  T fetch_and(T arg, std::memory_order order, loc_t loc = loc_t::current()) {
    return value_(platform::model::site(loc)).fetch_and(arg, platform::model::order(order));
  }

 private:
  // Relacy implements the C++11 rule that a CAS's failure order is no stronger than its success
  // order, and *silently* downgrades a stronger one (relaxed/acquire runs as relaxed/relaxed).
  // C++17 lifted that rule and production uses it (parker: relaxed on success, acquire on
  // failure). Such a CAS runs here with the strongest failure order Relacy accepts, followed on
  // failure by a fence of the requested strength. The fence slightly over-approximates (it also
  // acquires for this thread's earlier relaxed loads), never under-approximates.
  static bool failure_accepted(std::memory_order success, std::memory_order failure) noexcept {
    switch (success) {
      case std::memory_order_relaxed:
      case std::memory_order_release: return failure == std::memory_order_relaxed;
      case std::memory_order_consume:
      case std::memory_order_acquire:
      case std::memory_order_acq_rel: return failure != std::memory_order_seq_cst;
      case std::memory_order_seq_cst: return true;
    }
    return false;
  }
  template <bool weak>
  bool compare_exchange(T& expected, T desired, std::memory_order success, std::memory_order failure, loc_t loc) {
    auto proxy = value_(platform::model::site(loc));
    const bool accepted = failure_accepted(success, failure);
    const rl::memory_order rl_failure = accepted ? platform::model::order(failure) : rl::mo_relaxed;
    const bool swapped =
        weak ? proxy.compare_exchange_weak(expected, desired, platform::model::order(success), rl_failure)
             : proxy.compare_exchange_strong(expected, desired, platform::model::order(success), rl_failure);
    if (!swapped && !accepted) fence(failure, loc);
    return swapped;
  }

  mutable rl::atomic<T> value_;
};

template <class T>
class cell {
 public:
  template <class... Args>
  explicit cell(Args&&... args) : value_(std::forward<Args>(args)...), shadow_(0) {}
  cell(const cell&) = delete;
  cell& operator=(const cell&) = delete;

  template <class F>
  decltype(auto) with(F&& f, loc_t loc = loc_t::current()) const {
    (void)shadow_(platform::model::site(loc)).load();  // a read, checked against unordered writes
    return std::forward<F>(f)(static_cast<const T&>(value_));
  }
  template <class F>
  decltype(auto) with_mut(F&& f, loc_t loc = loc_t::current()) {
    shadow_(platform::model::site(loc)).store(0);  // a write, checked against every unordered access
    return std::forward<F>(f)(value_);
  }

 private:
  T value_;
  rl::var<int> shadow_;
};

class mutex {
 public:
  void lock(loc_t loc = loc_t::current()) { m_.lock(platform::model::site(loc)); }
  bool try_lock(loc_t loc = loc_t::current()) { return m_.try_lock(platform::model::site(loc)); }
  void unlock(loc_t loc = loc_t::current()) { m_.unlock(platform::model::site(loc)); }

 private:
  friend class condvar;
  rl::mutex m_;
};

template <class M>
class lock_guard {
 public:
  explicit lock_guard(M& m, loc_t loc = loc_t::current()) : m_(m), loc_(loc) { m_.lock(loc_); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;
  ~lock_guard() { m_.unlock(loc_); }

 private:
  M& m_;
  loc_t loc_;
};

template <class M>
class unique_lock {
 public:
  explicit unique_lock(M& m, loc_t loc = loc_t::current()) : m_(&m), loc_(loc) {
    m_->lock(loc_);
    owns_ = true;
  }
  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;
  ~unique_lock() {
    if (owns_) m_->unlock(loc_);
  }

  void lock(loc_t loc = loc_t::current()) {
    RL_ASSERT(!owns_);
    m_->lock(loc);
    owns_ = true;
  }
  void unlock(loc_t loc = loc_t::current()) {
    RL_ASSERT(owns_);
    m_->unlock(loc);
    owns_ = false;
  }
  bool owns_lock() const noexcept { return owns_; }
  M* mutex() const noexcept { return m_; }

 private:
  M* m_;
  loc_t loc_;
  bool owns_ = false;
};

class condvar {
 public:
  void wait(unique_lock<mutex>& lock, loc_t loc = loc_t::current()) {
    RL_ASSERT(lock.owns_lock());
    cv_.wait(lock.mutex()->m_, platform::model::site(loc));
  }
  // Returns false when the (modelled) deadline passed. The checker picks when: see the header.
  bool wait_until(unique_lock<mutex>& lock, instant /*deadline*/, loc_t loc = loc_t::current()) {
    RL_ASSERT(lock.owns_lock());
    return cv_.wait_for(lock.mutex()->m_, 0, platform::model::site(loc));
  }
  void notify_one(loc_t loc = loc_t::current()) { cv_.notify_one(platform::model::site(loc)); }
  void notify_all(loc_t loc = loc_t::current()) { cv_.notify_all(platform::model::site(loc)); }

 private:
  rl::condition_variable cv_;
};

}  // namespace weft::sync
