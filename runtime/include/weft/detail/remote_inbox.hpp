// weft/detail/remote_inbox.hpp — the bounded cross-thread queue into one event loop.
//
// Producers (any thread) push user work (bounded) or internal wakes (unbounded: a task wake or a
// completion notice whose loss would strand its target; their number is bounded by the live
// tasks and in-flight operations, each of which has at most one wake queued — the task state's
// `scheduled` bit coalesces the rest). The owner thread drains everything at once.
//
// States (all under `lock_`):
//   open      user pushes accepted up to `capacity_` queued user items; internal pushes accepted
//   closed    user pushes answer `closed`; internal pushes still accepted (the loop owns their
//             targets and will see them at its next drive or at its destruction)
//   dead      the loop is gone: every push is refused; the caller disposes of the item
//
// The close commit (try_close) happens under `lock_` and succeeds only if nothing is queued, and
// push_user checks `closed` under the same lock: a user item is either accepted before the close
// (and the close then fails, so the loop goes on and runs it) or refused with `closed`. No
// accepted item is ever stranded.
//
// `pending_` mirrors the number of queued items so the owner can skip the lock when it is zero;
// a push that races that check also notifies the loop's driver, so the item is seen next turn.
#pragma once

#include <cstddef>

#include <weft/detail/runnable.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class remote_inbox {
 public:
  enum class push_result { accepted, full, closed };

  explicit remote_inbox(std::size_t capacity) : capacity_(capacity) { WEFT_ASSERT(capacity >= 1); }
  remote_inbox(const remote_inbox&) = delete;
  remote_inbox& operator=(const remote_inbox&) = delete;
  ~remote_inbox() {
    guarded_.with_mut([](guarded& g) { WEFT_ASSERT(g.items.empty()); });
  }

  std::size_t capacity() const noexcept { return capacity_; }

  // Any thread. On `full`/`closed` the item was not taken: the caller still owns it.
  push_result push_user(runnable* item) {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with_mut([&](guarded& g) {
      if (g.closed) return push_result::closed;
      if (g.user_queued >= capacity_) return push_result::full;
      g.items.push_back(item);
      ++g.user_queued;
      // release: pairs with the acquire in has_pending(); the lock orders the item itself.
      pending_.fetch_add(1, std::memory_order_release);
      return push_result::accepted;
    });
  }

  // Any thread. False only when the loop is gone (the caller disposes of the item).
  bool push_internal(runnable* item) {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with_mut([&](guarded& g) {
      if (g.dead) return false;
      g.items.push_back(item);
      // release: pairs with the acquire in has_pending().
      pending_.fetch_add(1, std::memory_order_release);
      return true;
    });
  }

  // Owner. A hint: false may be stale (a racing push notifies the driver), true is exact.
  bool has_pending() const noexcept {
    // acquire: pairs with the release increments in push_user/push_internal.
    return pending_.load(std::memory_order_acquire) != 0;
  }

  // Owner. Moves every queued item, in arrival order, to `out`.
  void drain_into(runnable_queue& out) {
    if (!has_pending()) return;
    sync::lock_guard<sync::mutex> hold(lock_);
    guarded_.with_mut([&](guarded& g) {
      // relaxed: the count is only a hint; the lock orders the queue.
      pending_.fetch_sub(g.items.size(), std::memory_order_relaxed);
      g.user_queued = 0;
      out.splice_back(g.items);
    });
  }

  // Owner: the close commit. Succeeds only when nothing is queued; afterwards user pushes are
  // refused with `closed`. A failure means work arrived: the caller must go on running.
  bool try_close() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with_mut([&](guarded& g) {
      if (!g.items.empty()) return false;
      g.closed = true;
      return true;
    });
  }

  // Owner: accept user work again (a new drive of the loop begins).
  void reopen() {
    sync::lock_guard<sync::mutex> hold(lock_);
    guarded_.with_mut([](guarded& g) {
      if (!g.dead) g.closed = false;
    });
  }

  bool is_closed() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with([](const guarded& g) { return g.closed; });
  }

  // Owner, at destruction: refuse everything from now on; hands back what is still queued.
  runnable_queue kill() {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with_mut([&](guarded& g) {
      g.closed = true;
      g.dead = true;
      pending_.fetch_sub(g.items.size(), std::memory_order_relaxed);  // relaxed: see drain_into
      g.user_queued = 0;
      return runnable_queue(std::move(g.items));
    });
  }

 private:
  struct guarded {
    runnable_queue items;
    std::size_t user_queued = 0;  // user items in `items` (internal wakes are not counted)
    bool closed = false;
    bool dead = false;
  };

  const std::size_t capacity_;
  sync::mutex lock_;
  sync::cell<guarded> guarded_;
  sync::atomic<std::size_t> pending_{0};
};

}  // namespace weft::detail
