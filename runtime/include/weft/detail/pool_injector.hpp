// weft/detail/pool_injector.hpp — a stealing_pool's global queue for one priority: where work
// submitted from outside the pool's workers (and a worker's overflow) waits for any worker.
//
// A FIFO of runnables under a lock, plus a count readable without it. The count is what lets an
// idle worker and a submitter agree on whether work is waiting (pool_idle.hpp): push() raises it
// with a seq_cst read-modify-write that the submitter's later seq_cst load of the parked count
// cannot pass, and a worker's re-check loads it seq_cst after announcing itself parked.
//
// The queue is a ring of pointers, not a list linked through the runnables: taking a batch then
// copies pointers out of one or two cache lines instead of visiting every task cell under the
// lock (a cache miss each, when the batch came from another worker's overflow).
//
//   field                   who touches it
//   ring_, head_, count_    under lock_
//   size_                   written under lock_; read by anyone (approximate outside the lock)
#pragma once

#include <cstddef>
#include <vector>

#include <weft/detail/runnable.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class pool_injector {
 public:
  pool_injector() noexcept = default;
  pool_injector(const pool_injector&) = delete;
  pool_injector& operator=(const pool_injector&) = delete;

  // Any thread. Appends one runnable (the queue takes the caller's ownership of it).
  void push(runnable* item) {
    sync::lock_guard<sync::mutex> hold(lock_);
    append(item);
    // seq_cst: the store half of the submitter's store-load pair with an idle worker (the head
    // of this file); pairs with the seq_cst load in size().
    size_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Any thread. Appends `n` runnables, keeping their order.
  void push_batch(runnable* const* items, std::size_t n) {
    if (n == 0) return;
    sync::lock_guard<sync::mutex> hold(lock_);
    for (std::size_t i = 0; i < n; ++i) append(items[i]);
    // seq_cst: as in push().
    size_.fetch_add(n, std::memory_order_seq_cst);
  }

  // Any thread. Takes up to `max` of the oldest runnables into `out` (in order); returns how many.
  std::size_t pop_batch(runnable** out, std::size_t max) noexcept {
    if (max == 0 || size() == 0) return 0;  // the common idle case takes no lock
    sync::lock_guard<sync::mutex> hold(lock_);
    const std::size_t n = count_ < max ? count_ : max;
    const std::size_t mask = ring_.size() - 1;
    for (std::size_t i = 0; i < n; ++i) out[i] = ring_[(head_ + i) & mask];
    head_ = (head_ + n) & mask;
    count_ -= n;
    // relaxed: under lock_; readers outside it only estimate (a worker's re-check after announcing
    // itself parked needs to see pushes, not pops).
    size_.fetch_sub(n, std::memory_order_relaxed);
    return n;
  }

  // Any thread. The number of queued runnables (exact under the lock, an estimate outside it).
  std::size_t size() const noexcept {
    // seq_cst: the load half of an idle worker's store-load pair (pool_idle.hpp); pairs with
    // the seq_cst increments in push().
    return size_.load(std::memory_order_seq_cst);
  }

  // Shutdown, with no worker left: every runnable still queued, in order.
  runnable_queue take_all() noexcept {
    sync::lock_guard<sync::mutex> hold(lock_);
    runnable_queue all;
    const std::size_t mask = ring_.size() - 1;
    for (std::size_t i = 0; i < count_; ++i) all.push_back(ring_[(head_ + i) & mask]);
    head_ = 0;
    count_ = 0;
    size_.store(0, std::memory_order_relaxed);  // relaxed: under lock_, and nobody is left to wake
    return all;
  }

 private:
  // Under lock_: appends at the tail, doubling the ring when it is full (the injector is
  // unbounded, as the pool's queues are: overflow moves work here rather than refusing it).
  void append(runnable* item) {
    if (count_ == ring_.size()) grow();
    ring_[(head_ + count_) & (ring_.size() - 1)] = item;
    ++count_;
  }
  void grow() {
    std::vector<runnable*> bigger(ring_.empty() ? initial_capacity : ring_.size() * 2);
    const std::size_t mask = ring_.size() - 1;
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) & mask];
    ring_.swap(bigger);
    head_ = 0;
  }
  static constexpr std::size_t initial_capacity = 64;  // a power of two, as every later size

  sync::mutex lock_;
  std::vector<runnable*> ring_;  // a power of two long (or empty)
  std::size_t head_ = 0;         // index of the oldest
  std::size_t count_ = 0;
  sync::atomic<std::size_t> size_{0};
};

}  // namespace weft::detail
