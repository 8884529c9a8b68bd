// weft/detail/pool_idle.hpp — which stealing_pool workers are parked, and the handshake that
// keeps a submission from being stranded while every worker sleeps.
//
// A worker with nothing to do announce()s itself, then re-checks every queue, and parks only if
// the re-check found nothing; a submitter publishes its work (pool_injector::push, a seq_cst
// read-modify-write of the injector's count) and then asks wake_one(), which loads the parked
// count seq_cst. This is a store-load pair on each side (announce's increment then the queue
// loads; the queue increment then the parked-count load); with all four seq_cst, at least one
// side sees the other's store: either the worker finds the work, or the submitter finds the
// worker and wakes it (parker tokens are kept, so an unpark before the park is not lost).
//
// Invariants:
//   * a worker is listed at most once; wake_one() unlists the worker it returns, so one
//     submission wakes at most one worker;
//   * a listed worker is parked or about to re-check; withdraw() unlists it if it found work
//     itself (a concurrent wake_one() may have unlisted it first: its token then makes one later
//     park() return at once, which costs a loop, not a wake-up). A worker whose park() returned
//     withdraws too, since that early return leaves it listed;
//   * wake_all() (shutdown) unlists everyone.
//
//   field      who touches it
//   listed_    under lock_
//   stack_     under lock_ (most recently parked on top: its caches are the warmest)
//   parked_    written under lock_; read by anyone
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

class pool_idle {
 public:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  explicit pool_idle(std::size_t workers) : listed_(workers, 0) { stack_.reserve(workers); }
  pool_idle(const pool_idle&) = delete;
  pool_idle& operator=(const pool_idle&) = delete;

  // Worker `index`, out of work: lists it as parked, then re-checks (`work_visible()`: every
  // queue, and whatever else would end the wait). True: the caller parks now. False: the re-check
  // found something, and the worker is unlisted again (or a waker already unlisted it).
  template <class WorkVisible>
  bool prepare_park(std::size_t index, WorkVisible&& work_visible) {
    announce(index);
    if (work_visible()) {
      (void)withdraw(index);
      return false;
    }
    return true;
  }

  // The two halves of prepare_park(). announce() lists the worker; the caller must re-check
  // every queue afterwards.
  void announce(std::size_t index) {
    sync::lock_guard<sync::mutex> hold(lock_);
    WEFT_ASSERT(!listed_[index]);
    listed_[index] = 1;
    stack_.push_back(index);
    // seq_cst: the store half of the worker's store-load pair (the head of this file); pairs with
    // the seq_cst load in wake_one().
    parked_.fetch_add(1, std::memory_order_seq_cst);
  }

  // Worker `index`, which found work after announce(): unlist it. False when a waker already did.
  bool withdraw(std::size_t index) {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (!listed_[index]) return false;
    listed_[index] = 0;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] == index) {
        stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    // relaxed: under lock_; a racing wake_one() that reads the stale count takes the lock and
    // finds the list as it is.
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  // After publishing work: unlists one parked worker and returns its index (the caller unparks
  // it), or none when no worker is parked.
  std::size_t wake_one() {
    // seq_cst: the load half of the submitter's store-load pair (the head of this file); pairs
    // with the seq_cst increment in announce().
    if (parked_.load(std::memory_order_seq_cst) == 0) return none;
    sync::lock_guard<sync::mutex> hold(lock_);
    if (stack_.empty()) return none;
    const std::size_t index = stack_.back();
    stack_.pop_back();
    listed_[index] = 0;
    // relaxed: under lock_ (see withdraw()).
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return index;
  }

  // Shutdown: unlists every worker; the caller unparks them all.
  void wake_all() {
    sync::lock_guard<sync::mutex> hold(lock_);
    for (std::size_t i : stack_) listed_[i] = 0;
    stack_.clear();
    // relaxed: under lock_.
    parked_.store(0, std::memory_order_relaxed);
  }

  // Any thread: how many workers are listed (an estimate; for stats and cheap wake decisions
  // where a missed wake costs only parallelism, not progress).
  std::size_t parked_approx() const noexcept {
    // relaxed: an estimate (see the comment above).
    return parked_.load(std::memory_order_relaxed);
  }

 private:
  sync::mutex lock_;
  std::vector<std::uint8_t> listed_;
  std::vector<std::size_t> stack_;
  sync::atomic<std::size_t> parked_{0};
};

}  // namespace weft::detail
