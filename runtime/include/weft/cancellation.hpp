// weft/cancellation.hpp — cancelling an operation from anywhere, beside dropping it.
//
// A cancellation_source is cancelled once, from any thread; its tokens (cheap to copy, sendable)
// let an awaited operation end early: `co_await with_cancellation(token, op)` answers op's result,
// or cancel_error::cancelled if the source was cancelled first. Cancelling drops the operation on
// its own loop, exactly as a timeout does: an I/O operation is cancelled in the kernel and loses
// no bytes (docs/io.md), a task is aborted.
//
// Invariants of the shared state:
//   * `cancelled_` goes false->true once, under `lock_`; registrations made after it see it and
//     never wait;
//   * cancel() takes the registered wakers out under the lock and wakes them after releasing it,
//     so a waker's wake (which may take another loop's locks) never runs under `lock_`;
//   * a registration is removed by its leaf (owner thread) before the leaf goes; wakers outlive
//     what they wake safely (waker.hpp), so a wake racing the removal is harmless.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/expected.hpp>
#include <weft/platform/sync.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

namespace weft {

enum class cancel_error {
  cancelled,  // the source was cancelled before the operation finished; the operation was dropped
};

namespace detail {
class cancellation_state {
 public:
  bool is_cancelled() const noexcept {
    // acquire: pairs with cancel()'s release store, so work done before cancel() is visible.
    return cancelled_.load(std::memory_order_acquire);
  }
  void cancel() {
    std::vector<std::pair<std::uint64_t, waker>> to_wake;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      if (cancelled_.load(std::memory_order_relaxed)) return;  // relaxed: written under lock_ only
      cancelled_.store(true, std::memory_order_release);       // pairs with is_cancelled()
      to_wake.swap(registered_);
    }
    for (auto& [id, w] : to_wake) std::move(w).wake();
  }
  // Registers (or updates) `id`'s waker; false when already cancelled (nothing registered).
  bool watch(std::uint64_t& id, const waker& w) {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (cancelled_.load(std::memory_order_relaxed)) return false;  // relaxed: under lock_
    if (id != 0) {
      for (auto& entry : registered_) {
        if (entry.first != id) continue;
        if (!entry.second.will_wake(w)) entry.second = w;
        return true;
      }
    }
    id = ++next_id_;
    registered_.emplace_back(id, w);
    return true;
  }
  void unwatch(std::uint64_t id) noexcept {
    if (id == 0) return;
    sync::lock_guard<sync::mutex> hold(lock_);
    for (auto it = registered_.begin(); it != registered_.end(); ++it) {
      if (it->first != id) continue;
      registered_.erase(it);
      return;
    }
  }

 private:
  sync::mutex lock_;
  sync::atomic<bool> cancelled_{false};
  std::uint64_t next_id_ = 0;                                // under lock_
  std::vector<std::pair<std::uint64_t, waker>> registered_;  // under lock_, in registration order
};
}  // namespace detail

class cancellation_token {
 public:
  cancellation_token() = default;  // never cancelled
  bool is_cancelled() const noexcept { return state_ && state_->is_cancelled(); }

 private:
  friend class cancellation_source;
  template <class>
  friend class cancellable_leaf;
  explicit cancellation_token(std::shared_ptr<detail::cancellation_state> s) noexcept : state_(std::move(s)) {}
  std::shared_ptr<detail::cancellation_state> state_;
};

class cancellation_source {
 public:
  cancellation_source() : state_(std::make_shared<detail::cancellation_state>()) {}
  cancellation_token token() const noexcept { return cancellation_token(state_); }
  // Any thread; idempotent.
  void cancel() { state_->cancel(); }
  bool is_cancelled() const noexcept { return state_->is_cancelled(); }

 private:
  std::shared_ptr<detail::cancellation_state> state_;
};

// Leaf: the inner operation's result, or cancel_error::cancelled if the token's source was
// cancelled first (the inner operation is then dropped with this leaf). A token cancelled before
// the first poll keeps the operation from starting; once started, an operation that completed
// wins over a cancel that came after (its bytes moved, its connection exists), as with timeout.
template <class Inner>
class cancellable_leaf {
 public:
  using inner_result = decltype(std::declval<Inner&>().await_resume());
  using result_type = expected<inner_result, cancel_error>;

  cancellable_leaf(cancellation_token token, Inner inner) : token_(std::move(token)), inner_(std::move(inner)) {}
  cancellable_leaf(cancellable_leaf&& other) noexcept
      : token_(std::move(other.token_)), inner_(std::move(other.inner_)), id_(std::exchange(other.id_, 0)),
        started_(other.started_), cancelled_(other.cancelled_) {}
  cancellable_leaf(const cancellable_leaf&) = delete;
  cancellable_leaf& operator=(const cancellable_leaf&) = delete;
  cancellable_leaf& operator=(cancellable_leaf&&) = delete;
  ~cancellable_leaf() {
    if (token_.state_) token_.state_->unwatch(id_);
  }

  bool poll_ready(const waker& w) {
    if (!started_ && token_.is_cancelled()) return cancelled_ = true;
    started_ = true;
    if (inner_.poll_ready(w)) return true;
    // Registered after the inner poll: a cancel between the two is seen by watch().
    if (token_.state_ && !token_.state_->watch(id_, w)) return cancelled_ = true;
    return false;
  }
  result_type await_resume() {
    if (cancelled_) return unexpected(cancel_error::cancelled);
    return detail::resume_inner<cancel_error>(inner_);
  }

 private:
  cancellation_token token_;
  Inner inner_;
  std::uint64_t id_ = 0;
  bool started_ = false;  // the inner operation was polled (so may have started)
  bool cancelled_ = false;
};

// with_cancellation(token, op): op is a task<T> (run as its own task on this loop, aborted when
// cancelled) or a leaf awaitable taken by value.
template <class A>
auto with_cancellation(cancellation_token token, A&& operation) {
  using plain = std::remove_cvref_t<A>;
  using inner = typename detail::as_leaf<plain>::type;
  static_assert(leaf_awaitable<inner>, "with_cancellation needs a weft::task<T> or a leaf awaitable");
  return cancellable_leaf<inner>(std::move(token), inner(std::forward<A>(operation)));
}

}  // namespace weft
