// weft/detail/pool_injector.hpp — a stealing_pool's global queue for one priority: where work
// submitted from outside the pool's workers (and a worker's overflow) waits for any worker.
//
// A FIFO of runnables under a lock, plus a count readable without it. The count is what lets an
// idle worker and a submitter agree on whether work is waiting (pool_idle.hpp): push() raises it
// with a seq_cst read-modify-write that the submitter's later seq_cst load of the parked count
// cannot pass, and a worker's re-check loads it seq_cst after announcing itself parked.
//
//   field    who touches it
//   queue_   under lock_
//   size_    written under lock_; read by anyone (approximate outside the lock)
#pragma once

#include <cstddef>

#include <weft/detail/runnable.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class pool_injector {
 public:
  pool_injector() noexcept = default;
  pool_injector(const pool_injector&) = delete;
  pool_injector& operator=(const pool_injector&) = delete;

  // Any thread. Appends one runnable (the queue takes the caller's ownership of it).
  void push(runnable* item) noexcept {
    sync::lock_guard<sync::mutex> hold(lock_);
    queue_.push_back(item);
    // seq_cst: the store half of the submitter's store-load pair with an idle worker (the head
    // of this file); pairs with the seq_cst load in size().
    size_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Any thread. Appends a whole batch, keeping its order.
  void push_batch(runnable_queue& batch) noexcept {
    if (batch.empty()) return;
    const std::size_t n = batch.size();
    sync::lock_guard<sync::mutex> hold(lock_);
    queue_.splice_back(batch);
    // seq_cst: as in push().
    size_.fetch_add(n, std::memory_order_seq_cst);
  }

  // Any thread. Takes up to `max` of the oldest runnables into `out` (in order); returns how many.
  std::size_t pop_batch(runnable** out, std::size_t max) noexcept {
    if (max == 0 || size() == 0) return 0;  // the common idle case takes no lock
    sync::lock_guard<sync::mutex> hold(lock_);
    std::size_t n = 0;
    while (n < max) {
      runnable* r = queue_.pop_front();
      if (r == nullptr) break;
      out[n++] = r;
    }
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
    runnable_queue all(std::move(queue_));
    size_.store(0, std::memory_order_relaxed);  // relaxed: under lock_, and nobody is left to wake
    return all;
  }

 private:
  sync::mutex lock_;
  runnable_queue queue_;
  sync::atomic<std::size_t> size_{0};
};

}  // namespace weft::detail
