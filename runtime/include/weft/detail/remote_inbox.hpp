// weft/detail/remote_inbox.hpp — the bounded cross-thread queue into one event loop.
//
// Producers (any thread) push user work (bounded) or internal wakes (unbounded: a task wake or a
// completion notice whose loss would strand its target; their number is bounded by the live
// tasks and in-flight operations, each of which has at most one wake queued — the task state's
// `scheduled` bit coalesces the rest). The owner thread drains everything at once.
//
// Two queues. User work goes into `guarded_` under `lock_` (the bound and the close commit need
// the lock). Internal wakes go onto `wakes_`, a lock-free stack (push by CAS, taken whole by one
// exchange, reversed into arrival order): a cross-thread wake is the hot path of request/response
// between workers, and it then touches one word instead of a lock, a list and a counter
// (ping_pong, docs/benchmarks.md). A drain takes the wakes first, then the user items; the two
// kinds come from different producers and are never ordered against each other.
//
// States:
//   open      user pushes accepted up to `capacity_` queued user items; internal pushes accepted
//   closed    user pushes answer `closed`; internal pushes still accepted (the loop owns their
//             targets and will see them at its next drive or at its destruction)
//   dead      the loop is gone: every push is refused; the caller disposes of the item
// `closed`/`dead` for user pushes live in `guarded_`; `dead` for internal pushes is the mark
// `dead_wakes()` in `wakes_`, set by kill() with the same exchange that takes the last wakes, so an
// internal push either lands before it (and kill() hands it back) or is refused.
//
// The close commit (try_close) happens under `lock_` and succeeds only if nothing is queued, and
// push_user checks `closed` under the same lock: a user item is either accepted before the close
// (and the close then fails, so the loop goes on and runs it) or refused with `closed`. No
// accepted item is ever stranded.
//
// `pending_` mirrors the number of queued user items so the owner can skip the lock when it is
// zero; a push that races that check (user or internal) has a notification of the loop's driver
// on its way (its own, or that of the push it queued behind: see below), so the item is seen next
// turn.
//
// Notifications: a push tells its caller whether to notify the owner (`wake_owner`). Only a push
// into an empty queue of its kind must: a push that finds items queued lands behind them, and the
// drain that takes them takes it too, in the same critical section (user items) or the same
// exchange (wakes). The push of the oldest of them found its queue empty, so its caller notifies
// after it; by induction every queued item has a notification on its way. A burst of pushes into
// a busy loop then takes the driver's line once per drain instead of once per push. The price: a
// pusher descheduled between its push and its notify delays the items queued behind it, as it
// delays its own, until it runs again or the owner drains for another reason.
#pragma once

#include <cstddef>
#include <cstdint>

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
    // relaxed: the last owner of the inbox already synchronised with every producer.
    [[maybe_unused]] runnable* const wakes = wakes_.load(std::memory_order_relaxed);
    WEFT_ASSERT(wakes == nullptr || wakes == dead_wakes());
  }

  std::size_t capacity() const noexcept { return capacity_; }

  // Any thread. On `full`/`closed` the item was not taken: the caller still owns it. Accepted,
  // `*wake_owner` says whether the caller must notify the owner (see "Notifications" above).
  push_result push_user(runnable* item, bool* wake_owner) {
    sync::lock_guard<sync::mutex> hold(lock_);
    return guarded_.with_mut([&](guarded& g) {
      if (g.closed) return push_result::closed;
      if (g.user_queued >= capacity_) return push_result::full;
      *wake_owner = g.items.empty();
      g.items.push_back(item);
      ++g.user_queued;
      // release: pairs with the acquire in has_pending(); the lock orders the item itself.
      pending_.fetch_add(1, std::memory_order_release);
      return push_result::accepted;
    });
  }

  // Any thread. False only when the loop is gone (the caller disposes of the item). Accepted,
  // `*wake_owner` says whether the caller must notify the owner (see "Notifications" above).
  bool push_internal(runnable* item, bool* wake_owner) {
    WEFT_ASSERT(item->next == nullptr);
    // relaxed: only the CAS below publishes; a stale head just fails it.
    runnable* head = wakes_.load(std::memory_order_relaxed);
    do {
      if (head == dead_wakes()) {
        item->next = nullptr;  // not queued: the caller gets it back untouched
        return false;
      }
      item->next = head;
      // release on success: pairs with the acquire exchange in take_wakes(), so the owner sees
      // the item (and whatever the waker wrote before waking) when it takes the stack.
    } while (!wakes_.compare_exchange_weak(head, item, std::memory_order_release, std::memory_order_relaxed));
    *wake_owner = head == nullptr;  // the exchange that takes `head` takes this item too
    return true;
  }

  // Owner. A hint: false may be stale (a racing push notifies the driver), true is exact.
  bool has_pending() const noexcept {
    if (has_wakes()) return true;
    // acquire: pairs with the release increment in push_user.
    return pending_.load(std::memory_order_acquire) != 0;
  }

  // Owner. Moves every queued item to `out`: the internal wakes in arrival order, then the user
  // items in arrival order.
  void drain_into(runnable_queue& out) {
    if (has_wakes()) take_wakes(out, nullptr);
    // acquire: pairs with the release increment in push_user.
    if (pending_.load(std::memory_order_acquire) == 0) return;
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
      // A queued wake is work the loop must still run (it reads nothing of it here, so the
      // hint's relaxed load is enough; the drain that follows does the acquire).
      if (has_wakes()) return false;
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
      runnable_queue left(std::move(g.items));
      take_wakes(left, dead_wakes());
      return left;
    });
  }

 private:
  struct guarded {
    runnable_queue items;
    std::size_t user_queued = 0;  // user items in `items` (internal wakes are not counted)
    bool closed = false;
    bool dead = false;
  };

  // The mark kill() leaves in `wakes_`: no runnable lives at address 1.
  static runnable* dead_wakes() noexcept { return reinterpret_cast<runnable*>(std::uintptr_t{1}); }

  // Owner. A hint, like has_pending(); exact when true. Only the owner ever stores the dead mark
  // (kill()), so a drain that saw a real wake here cannot take the mark away.
  bool has_wakes() const noexcept {
    // relaxed: take_wakes()'s exchange does the acquire.
    runnable* const newest = wakes_.load(std::memory_order_relaxed);
    return newest != nullptr && newest != dead_wakes();
  }

  // Owner. Takes the whole wake stack (leaving `replacement`: empty, or the dead mark) and appends
  // it to `out` oldest first.
  void take_wakes(runnable_queue& out, runnable* replacement) {
    // acquire: pairs with the release CAS in push_internal().
    runnable* newest = wakes_.exchange(replacement, std::memory_order_acquire);
    if (newest == dead_wakes()) {  // killed before: nothing was pushed since
      WEFT_ASSERT(replacement == dead_wakes());
      return;
    }
    runnable* oldest = nullptr;
    while (newest) {  // reverse the stack into arrival order
      runnable* below = newest->next;
      newest->next = oldest;
      oldest = newest;
      newest = below;
    }
    while (oldest) {
      runnable* later = oldest->next;
      oldest->next = nullptr;
      out.push_back(oldest);
      oldest = later;
    }
  }

  const std::size_t capacity_;
  sync::mutex lock_;
  sync::cell<guarded> guarded_;
  sync::atomic<std::size_t> pending_{0};  // queued user items (a hint, see the head)
  // Last: an owner may place its driver's token right after it (loop_shared.hpp).
  sync::atomic<runnable*> wakes_{nullptr};  // internal wakes, newest first; dead_wakes() once killed
};

}  // namespace weft::detail
