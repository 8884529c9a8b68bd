// weft/detail/handback_stack.hpp — runnables handed back to the one thread that keeps their
// bookkeeping: a stealing_pool's task that completes on another worker than the one that adopted
// it goes back to that worker this way, to be unlinked from its task list.
//
// Any thread pushes; one thread, the owner, takes everything at once. push() links the runnable
// through `next` and publishes it with a release compare-and-swap; take_all() swaps the whole
// stack out with an acquire exchange, so the owner sees each runnable's `next` and whatever its
// pusher wrote before pushing it. No lock: a pusher never waits for the owner, and the owner's
// look at an empty stack is one load of a line nobody else wrote.
//
//   field   who touches it
//   head_   any thread (atomic); runnables on it are linked through `next`, written by their
//           pusher before its release CAS and read by the owner after its acquire exchange
#pragma once

#include <weft/detail/runnable.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class handback_stack {
 public:
  handback_stack() noexcept = default;
  handback_stack(const handback_stack&) = delete;
  handback_stack& operator=(const handback_stack&) = delete;

  // Any thread: hands `item` to the owner (with whatever ownership the two agree on).
  void push(runnable* item) noexcept {
    // relaxed: only a starting guess for the CAS, which re-reads on failure.
    runnable* top = head_.load(std::memory_order_relaxed);
    do {
      item->next = top;
      // release: publishes `next` and the pusher's earlier writes to the owner's acquire
      // exchange in take_all(); relaxed on failure: nothing was published.
    } while (!head_.compare_exchange_weak(top, item, std::memory_order_release, std::memory_order_relaxed));
  }

  // Owner: everything pushed so far, newest first, linked through `next` (null: nothing).
  runnable* take_all() noexcept {
    // relaxed first: the stack is usually empty, and a load keeps the line shared where an
    // exchange would take it from the pushers' caches. A push this misses is taken next time.
    if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
    // acquire: pairs with the release CAS in push().
    return head_.exchange(nullptr, std::memory_order_acquire);
  }

 private:
  sync::atomic<runnable*> head_{nullptr};
};

}  // namespace weft::detail
