// weft/detail/pool_injector.hpp — a stealing_pool's global queue for one priority: where work
// submitted from outside the pool's workers (and a worker's overflow) waits for any worker.
//
// Two parts: an inbound stack that push() links a runnable onto with one compare-and-swap (no
// lock: a burst of outside submissions never meets the workers' batch takes on a lock), and a
// FIFO ring of runnables under a lock, which only the takers and push_batch() touch. A taker,
// holding the lock, moves the whole inbound stack to the ring's tail (oldest first), then takes
// from the ring's head: every runnable in the ring was pushed before every one still inbound, so
// the queue stays FIFO.
//
// A count readable without the lock is what lets an idle worker and a submitter agree on whether
// work is waiting (pool_idle.hpp): push() raises it, after linking the runnable, with a seq_cst
// read-modify-write that the submitter's later seq_cst load of the idle state cannot pass, and a
// worker's re-check loads it seq_cst after announcing itself parked. A taker may take a runnable
// whose push has linked it but not yet counted it, so the count can dip below zero for a moment;
// size() reads such a dip as empty (the pusher's own increment and wake follow).
//
// Takers copy pointers out of the ring, one or two cache lines, instead of walking cells; the
// inbound stack is walked when it moves to the ring (reversed, then appended: the cells were
// written by their pushers just before, and the taker runs them next).
//
//   field                   who touches it
//   inbound_                any thread (atomic); runnables on it are linked through `next`,
//                           written by their pusher before its release CAS
//   ring_                   under lock_
//   size_                   any thread (atomic)
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/detail/runnable.hpp>
#include <weft/detail/runnable_ring.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

// Aligned to a cache line: a pool keeps one per priority side by side, and a worker's look at an
// empty level's size must not miss because a busy level's lock shares its line.
class alignas(64) pool_injector {
 public:
  pool_injector() noexcept = default;
  pool_injector(const pool_injector&) = delete;
  pool_injector& operator=(const pool_injector&) = delete;

  // Any thread. Appends one runnable (the queue takes the caller's ownership of it). Lock-free.
  void push(runnable* item) noexcept {
    // relaxed: only a starting guess for the CAS, which re-reads on failure.
    runnable* top = inbound_.load(std::memory_order_relaxed);
    do {
      item->next = top;
      // release: publishes the runnable (and `next`) to the taker's acquire exchange in
      // take_inbound(); relaxed on failure: nothing was published.
    } while (!inbound_.compare_exchange_weak(top, item, std::memory_order_release, std::memory_order_relaxed));
    // seq_cst: the store half of the submitter's store-load pair with an idle worker (the head
    // of this file); pairs with the seq_cst load in size().
    size_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Any thread. Appends `n` runnables, keeping their order.
  void push_batch(runnable* const* items, std::size_t n) {
    if (n == 0) return;
    sync::lock_guard<sync::mutex> hold(lock_);
    take_inbound();  // what was pushed before goes first
    for (std::size_t i = 0; i < n; ++i) ring_.push_back(items[i]);
    // seq_cst: as in push().
    size_.fetch_add(static_cast<std::int64_t>(n), std::memory_order_seq_cst);
  }

  // Any thread. Takes up to `max` of the oldest runnables into `out` (in order); returns how many.
  std::size_t pop_batch(runnable** out, std::size_t max) noexcept {
    if (max == 0 || size() == 0) return 0;  // the common idle case takes no lock
    sync::lock_guard<sync::mutex> hold(lock_);
    take_inbound();
    const std::size_t n = ring_.pop_front_into(out, max);
    // relaxed: under lock_; readers outside it only estimate (a worker's re-check after announcing
    // itself parked needs to see pushes, not pops).
    size_.fetch_sub(static_cast<std::int64_t>(n), std::memory_order_relaxed);
    return n;
  }

  // Any thread. The number of queued runnables (exact under the lock, an estimate outside it).
  std::size_t size() const noexcept {
    // seq_cst: the load half of an idle worker's store-load pair (pool_idle.hpp); pairs with
    // the seq_cst increments in push().
    const std::int64_t n = size_.load(std::memory_order_seq_cst);
    return n > 0 ? static_cast<std::size_t>(n) : 0;  // below zero: see the head of this file
  }

  // Shutdown, with no worker left: every runnable still queued, in order.
  runnable_queue take_all() noexcept {
    sync::lock_guard<sync::mutex> hold(lock_);
    take_inbound();
    runnable_queue all = ring_.take_all();
    size_.store(0, std::memory_order_relaxed);  // relaxed: under lock_, and nobody is left to wake
    return all;
  }

 private:
  // Under lock_: moves every inbound runnable to the ring's tail, oldest first (the stack holds
  // the newest on top: it is reversed on the way).
  void take_inbound() {
    // acquire: pairs with the release CAS of each push() whose runnable is on the stack.
    runnable* r = inbound_.exchange(nullptr, std::memory_order_acquire);
    runnable* oldest = nullptr;
    while (r != nullptr) {
      runnable* older = r->next;
      r->next = oldest;
      oldest = r;
      r = older;
    }
    while (oldest != nullptr) {
      runnable* newer = oldest->next;
      oldest->next = nullptr;
      ring_.push_back(oldest);  // the injector is unbounded, as the pool's queues are
      oldest = newer;
    }
  }

  sync::mutex lock_;
  runnable_ring ring_;
  sync::atomic<runnable*> inbound_{nullptr};  // the newest on top
  sync::atomic<std::int64_t> size_{0};
};

}  // namespace weft::detail
