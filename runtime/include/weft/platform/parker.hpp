// weft/platform/parker.hpp — park a thread until another unparks it (or a deadline passes).
//
// One parker belongs to one thread (the only one that parks on it); any thread may unpark.
// It is written once, over the seam's sync types, so the model flavor checks this very code and
// the simulator runs it with virtual-time deadlines.
//
// States of `state_`:
//   empty     nobody parked, no pending token
//   parked    the owner is (about to be) waiting on `cv_` under `lock_`
//   notified  a token is pending; the next park() consumes it and returns at once
//
// Invariants:
//   * A token is never lost: unpark() always leaves `notified`, and park() only returns after it
//     has consumed a token (or, for park_until, after the deadline).
//   * The owner moves empty->parked and parked->empty; unparkers only ever store `notified`.
//   * The owner consumes a token only by a read-modify-write (CAS or exchange), never a store, so
//     an unpark() coalesced into the token it takes is acquired with it.
//   * An unparker that sees `parked` takes `lock_` before notifying, so the owner is either not
//     yet waiting (and will re-check `state_` under the lock) or is waiting and gets the signal.
//   * `last_wake_prompt_` (the spin's quiet/yielding choice) is a plain field: only the owner,
//     inside park()/park_until(), reads or writes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>

namespace weft::platform {

// How long park() keeps polling for a token before it sleeps. A wake that arrives within the
// spin costs no system call on either side: the common case for request/response between two busy
// workers, where a futex sleep + wake costs several microseconds each way (docs/benchmarks.md).
// The spin is bounded in time (not in iterations: a pause lasts 10-140 cycles depending on the CPU), so an idle
// thread sleeps after at most this long, and never past a park_until deadline. Zero outside
// `real`: the simulator and the model checker gain nothing from spinning but longer schedules.
inline constexpr duration park_spin_budget =
    flavor == flavor_kind::real ? duration(std::chrono::microseconds(50)) : duration::zero();
// How long a loop thread's spin polls without yielding the core, while its wakes come promptly.
// A sched_yield is a system call (about a microsecond on a VM with page-table isolation) during
// which the spinner cannot see a token: yielding after every check would put a yield between most
// wakes and their discovery (docs/benchmarks.md). A quiet spinner keeps the core from any other
// runnable thread, so the spin is quiet only while the previous wake arrived within it (a
// request/response rhythm); a thread whose waits run longer (an idle worker) yields from its
// first check, since its quiet spin would hold a core the host thread and the busy worker need.
inline constexpr duration loop_park_spin_quiet =
    flavor == flavor_kind::real ? duration(std::chrono::microseconds(3)) : duration::zero();
// The same for a host thread blocked on a result (join_handle::join): it shares the cores with the
// workers computing that result, so it yields from its first check.
inline constexpr duration host_park_spin_quiet = duration::zero();
// Pauses between two clock reads while spinning.
inline constexpr int park_spin_pauses_per_check = 32;

// A processor hint inside a spin loop.
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The bounded spin a thread runs before it sleeps: polls `ready` for up to park_spin_budget
// (never past a deadline), quietly while wakes keep coming within `quiet` of its start, then
// yielding the core between checks. Owner thread only; shared by the parker and the real driver.
class spin_policy {
 public:
  explicit spin_policy(duration quiet) noexcept : quiet_(quiet) {}

  // True as soon as `ready()` answers true; false once the budget or the deadline is spent.
  template <class Ready>
  bool spin(Ready&& ready, std::optional<instant> deadline) {
    if (park_spin_budget == duration::zero()) return false;
    const instant start = clock::now();
    instant until = start + park_spin_budget;
    if (deadline && *deadline < until) until = *deadline;
    // Quiet only while wakes keep coming within the quiet spin: a thread whose waits are longer
    // (an idle worker, a host thread) yields from its first check, as a busy core needs.
    const instant quiet_until = start + quiet_;
    const instant yield_from = last_wake_prompt_ ? quiet_until : start;
    instant checked = start;
    for (;;) {
      for (int i = 0; i < park_spin_pauses_per_check; ++i) {
        spin_pause();
        if (ready()) {
          last_wake_prompt_ = checked < quiet_until;
          return true;
        }
      }
      checked = clock::now();
      if (checked >= until) {
        last_wake_prompt_ = false;
        return false;
      }
      // Between checks past the quiet spin, give the core to any other runnable thread: on a
      // machine with few cores a spinner must not keep the thread it waits for (or one just
      // woken) off the CPU.
      if (checked >= yield_from) yield_thread();
    }
  }

 private:
  const duration quiet_;
  bool last_wake_prompt_ = true;  // did the last spin end within its quiet part?
};

class parker {
 public:
  // A loop thread's parker (the driver's).
  parker() noexcept : parker(loop_park_spin_quiet) {}
  // `spin_quiet`: how long the spin in park() polls before it starts yielding between checks
  // (loop_park_spin_quiet or host_park_spin_quiet).
  explicit parker(duration spin_quiet) noexcept : spin_(spin_quiet) {}
  parker(const parker&) = delete;
  parker& operator=(const parker&) = delete;

  // Blocks until a token is available, then consumes it.
  void park() {
    // acquire: pairs with the release exchange in unpark(), so whatever the unparker wrote before
    // unparking is visible after park() returns.
    if (spin_for_token(std::nullopt)) return;
    sync::unique_lock<sync::mutex> guard(lock_);
    std::uint32_t expected = empty;
    // acquire on success, though lock_ already orders it against unpark()'s lock/notify. Failure
    // is relaxed: the only other value is `notified`, which consume_pending() takes with its own
    // acquire.
    if (!state_.compare_exchange_strong(expected, parked, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      WEFT_ASSERT(expected == notified);
      consume_pending();
      return;
    }
    for (;;) {
      cv_.wait(guard);
      if (try_consume_token()) return;  // otherwise a spurious wake-up: wait again
    }
  }

  // Like park(), but gives up at `deadline`. Returns true when a token was consumed.
  bool park_until(instant deadline) {
    if (spin_for_token(deadline)) return true;
    sync::unique_lock<sync::mutex> guard(lock_);
    std::uint32_t expected = empty;
    // Orders as in park().
    if (!state_.compare_exchange_strong(expected, parked, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      WEFT_ASSERT(expected == notified);
      consume_pending();
      return true;
    }
    for (;;) {
      const bool signalled = cv_.wait_until(guard, deadline);
      if (try_consume_token()) return true;
      if (!signalled) {
        // Deadline: leave `parked`, unless a token arrived in the meantime (then take it).
        // acquire: pairs with unpark()'s release exchange.
        const std::uint32_t prior = state_.exchange(empty, std::memory_order_acquire);
        return prior == notified;
      }
    }
  }

  // Makes a token available and wakes the owner if it is parked. Callable from any thread.
  void unpark() {
    // release: publishes the caller's writes to the park() that consumes this token.
    const std::uint32_t prior = state_.exchange(notified, std::memory_order_release);
    if (prior != parked) return;  // empty: the owner will see the token; notified: coalesced
    // The owner is parked or about to wait; taking the lock orders us after its CAS and its
    // entry into cv_.wait, so the notification cannot fall between them.
    { sync::lock_guard<sync::mutex> sync_with_waiter(lock_); }
    cv_.notify_one();
  }

 private:
  static constexpr std::uint32_t empty = 0;
  static constexpr std::uint32_t parked = 1;
  static constexpr std::uint32_t notified = 2;

  bool spin_for_token(std::optional<instant> deadline) {
    if (try_consume_token()) return true;
    return spin_.spin(
        [this] {
          // relaxed: only a hint; the CAS in try_consume_token() does the acquire. Reading first
          // keeps the spinner from taking the line exclusively while the unparker needs it.
          return state_.load(std::memory_order_relaxed) == notified && try_consume_token();
        },
        deadline);
  }
  // Consumes the token a failed CAS found. An exchange, not a store: an unpark() that lands
  // between that CAS and here coalesces into this token, and only a read-modify-write acquires
  // its release; a store would erase it unread, and its unparker's writes (an item it queued)
  // might stay unseen while the owner parks again.
  void consume_pending() {
    // acquire: pairs with the release exchange of each unpark() coalesced into this token.
    [[maybe_unused]] const std::uint32_t prior = state_.exchange(empty, std::memory_order_acquire);
    WEFT_ASSERT(prior == notified);
  }
  bool try_consume_token() {
    std::uint32_t expected = notified;
    // acquire: pairs with the release exchange in unpark().
    return state_.compare_exchange_strong(expected, empty, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }

  spin_policy spin_;
  sync::atomic<std::uint32_t> state_{empty};
  sync::mutex lock_;
  sync::condvar cv_;
};

}  // namespace weft::platform
