// weft/platform/real/driver.hpp — the production driver: a wake token in front of an OS backend.
//
// Invariants (token states, as in parker.hpp):
//   empty     no wake pending, owner running (outside wait())
//   spinning  no wake pending, owner idle in wait()'s spin: awake, and it sees a token there
//   sleeping  the owner is in (or about to enter) backend->block()
//   notified  a wake is pending; the owner's next wait() consumes it and returns
//   * notify() always leaves `notified`; it calls backend->wake() (a system call) only when it
//     replaced `sleeping`, so a notify while the owner runs or spins costs one atomic exchange.
//   * Only the owner moves out of empty, spinning and sleeping, each by CAS or exchange, and it
//     consumes `notified` only by a read-modify-write, so a concurrent `notified` is never
//     overwritten unread: empty->spinning when its spin starts,
//     spinning->empty when a completion ends it, spinning->sleeping before blocking and back to
//     empty by exchange after. A wake() posted before the owner enters the kernel is an event the
//     kernel keeps (a CQE, an eventfd count), so block() returns at once: no lost wake-up.
//   * Other threads read the state only as a hint (activity(): spawn placement looks for an idle
//     worker it can reach without a system call); no correctness rests on that read.
//   * backend_ is set at construction and never changes; only wake() is called off the owner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/platform/owner_activity.hpp>
#include <weft/platform/parker.hpp>
#include <weft/platform/real/driver_backend.hpp>
#include <weft/platform/sync.hpp>

namespace weft::platform {

// driver::try_now for both backends: preadv2 with RWF_NOWAIT (execute_now.cpp).
std::int64_t read_if_cached(const io_request& r) noexcept;

class driver {
 public:
  driver() : driver(driver_options{}) {}
  explicit driver(const driver_options& options);
  ~driver();
  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;

  void wait(std::optional<instant> deadline);
  void notify() noexcept {
    // release: publishes the notifier's writes (inbox pushes) to the wait() that consumes the
    // token with its acquire exchange/CAS.
    if (state_.exchange(notified, std::memory_order_release) == sleeping) backend_->wake();
  }

  // Any thread, a hint: the CPU the owner ran on when it last began to wait (-1: not yet).
  int owner_cpu() const noexcept {
    // relaxed: a placement hint; nothing is read through it.
    return owner_cpu_.load(std::memory_order_relaxed);
  }
  // Any thread, a hint (owner_activity.hpp).
  owner_activity activity() const noexcept {
    // relaxed: a placement hint; nothing is read through it.
    switch (state_.load(std::memory_order_relaxed)) {
      case empty: return owner_activity::running;
      case spinning: return owner_activity::spinning;
      default: return owner_activity::other;
    }
  }

  void submit(io_operation& op) { backend_->submit(op); }
  void cancel(io_operation& op) { backend_->cancel(op); }
  std::int64_t execute(const io_request& r) { return backend_->execute(r); }
  // Either backend: the page cache answers without a ring or a file thread.
  std::int64_t try_now(const io_request& r) noexcept { return read_if_cached(r); }
  std::size_t poll() { return backend_->poll(); }
  bool has_completions() const noexcept { return backend_->has_completions(); }
  std::size_t in_flight() const noexcept { return backend_->in_flight(); }
  void reap_all() { backend_->reap_all(); }
  io_driver_status status() const noexcept {
    return {backend_->kind(), fallback_reason_, backend_->completion_overflows()};
  }

 private:
  static constexpr std::uint32_t empty = 0;
  static constexpr std::uint32_t sleeping = 1;
  static constexpr std::uint32_t notified = 2;
  static constexpr std::uint32_t spinning = 3;

  bool try_consume_token() noexcept {
    std::uint32_t expected = notified;
    // acquire: pairs with notify()'s release exchange.
    return state_.compare_exchange_strong(expected, empty, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  // Owner: leave `from` (its own state: empty or spinning) for `to`, or consume the token a
  // notify() put there meanwhile. True when a token was consumed.
  bool leave_or_consume(std::uint32_t from, std::uint32_t to) noexcept {
    std::uint32_t expected = from;
    // relaxed: success publishes nothing; a failure found `notified`, which the exchange below
    // consumes with its own acquire.
    if (state_.compare_exchange_strong(expected, to, std::memory_order_relaxed, std::memory_order_relaxed)) {
      return false;
    }
    WEFT_ASSERT(expected == notified);
    // An exchange, not a store: a notify() that lands between the CAS and here coalesces into
    // this token, and only a read-modify-write acquires its release (a store would erase it
    // unread, and the owner might miss what that notifier queued). acquire: pairs with notify().
    (void)state_.exchange(empty, std::memory_order_acquire);
    return true;
  }
  bool spin(std::optional<instant> deadline);

  // The token first: an owner that embeds the driver right after the word its notifiers write
  // before notify() (loop_shared: the inbox's wake stack) has both on one cache line.
  sync::atomic<std::uint32_t> state_{empty};
  sync::atomic<int> owner_cpu_{-1};  // written by the owner only
  std::unique_ptr<driver_backend> backend_;
  std::optional<io_unavailable> fallback_reason_;
  spin_policy spin_{loop_park_spin_quiet};  // owner only
};

// The simulator's buffer-lifetime check (driver.hpp); production checks nothing and pays nothing.
inline void io_operation_freed(const io_operation&) noexcept {}

}  // namespace weft::platform
