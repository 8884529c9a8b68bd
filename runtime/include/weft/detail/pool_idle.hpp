// weft/detail/pool_idle.hpp — which stealing_pool workers are parked or searching, and the
// handshake that keeps a submission from being stranded while every worker sleeps.
//
// A worker is, as far as this file knows, one of: running (neither listed nor counted), parked
// (listed: on the stack and in the parked count; asleep or about to re-check) or searching
// (woken by wake_one(), awake, counted in the searching count by begin_search(), and not yet done
// looking for work). A woken worker counts itself once it runs, not its waker: a worker that
// waits for a CPU must not hold back the wakes of the others (on a loaded machine that wait is
// a scheduler tick, and with it every submission of the burst would wait).
//
// A worker with nothing to do announce()s itself (a searcher stops counting as one in the same
// read-modify-write), then re-checks every queue, and parks only if the re-check found nothing.
// A submitter publishes its work (pool_injector::push, a seq_cst read-modify-write of the
// injector's count) and then asks wake_one(), which loads the state word seq_cst and wakes a
// parked worker only when no worker is searching: one wake per burst of submissions once a
// woken worker runs, not one per task. A searcher that finds work says so with end_search(); the last searcher then calls
// wake_one() itself, so the burst's remaining work gets the next worker.
//
// No lost wake-up. Parked worker: a store-load pair on each side (announce's read-modify-write
// then the queue loads; the queue increment then the state load); with all four seq_cst, at
// least one side sees the other: the worker finds the work, or the submitter finds the worker
// listed and wakes it (parker tokens are kept, so an unpark before the park is not lost).
// Searcher: a submitter that skips the wake saw some searcher X counted; X's end of searching
// is a seq_cst read-modify-write later in the single total order than that load, so after the
// push. If X ends by announcing, its re-check comes after that and sees the work. If X ends by
// finding other work while others still search, the same holds for one of them; as the last
// searcher it calls wake_one(), whose seq_cst load also follows the push: it wakes a parked
// worker (whose search then sees the work), or finds another searcher (the same argument), or
// finds none parked (every worker is awake and looks at the injector before parking).
//
// Invariants:
//   * a worker is listed at most once; wake_one() unlists the worker it returns, so one
//     submission wakes at most one worker;
//   * a listed worker is parked or about to re-check; withdraw() unlists it if it found work
//     itself, and returns false when a waker unlisted it first: the worker then calls
//     begin_search(), and later end_search() or announce() as a searcher (the waker's token
//     makes one later park() return at once, which costs a loop, not a wake-up). A worker whose
//     park() returned withdraws too, since that early return leaves it listed;
//   * only a worker that counted itself with begin_search() lowers the searching count;
//   * wake_all() (shutdown) unlists everyone.
//
//   field      who touches it
//   listed_    under lock_
//   stack_     under lock_ (most recently parked on top: its caches are the warmest)
//   state_     parked count (low half) and searching count (high half); the parked count changes
//              under lock_, the searching count by each searcher itself without the lock; read
//              by anyone
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

  explicit pool_idle(std::size_t workers) : listed_(workers, 0) {
    WEFT_ASSERT(workers <= count_mask);
    stack_.reserve(workers);
  }
  pool_idle(const pool_idle&) = delete;
  pool_idle& operator=(const pool_idle&) = delete;

  // Worker `index`, out of work: lists it as parked (`searching`: it counted itself as a
  // searcher, and stops being one), then re-checks (`work_visible()`: every queue, and whatever
  // else would end the wait). True: the caller parks now, and calls woken() when park() returns.
  // False: the re-check found something, and the worker is unlisted again; `searching` then says
  // whether a waker unlisted it first (and so it counts itself searching).
  template <class WorkVisible>
  bool prepare_park(std::size_t index, bool& searching, WorkVisible&& work_visible) {
    announce(index, searching);
    searching = false;
    if (work_visible()) {
      searching = woken(index);
      return false;
    }
    return true;
  }

  // Worker `index`, awake again after announce(): unlists it, or, when a waker already did,
  // counts it as searching. Returns whether it now searches.
  bool woken(std::size_t index) {
    if (withdraw(index)) return false;
    begin_search();
    return true;
  }

  // The two halves of prepare_park(). announce() lists the worker; the caller must re-check
  // every queue afterwards.
  void announce(std::size_t index, bool searching) {
    sync::lock_guard<sync::mutex> hold(lock_);
    WEFT_ASSERT(!listed_[index]);
    listed_[index] = 1;
    stack_.push_back(index);
    const std::uint64_t change = searching ? parked_one - searching_one : parked_one;  // wraps: one field each
    // seq_cst: the store half of the worker's store-load pair (the head of this file); pairs with
    // the seq_cst load in wake_one().
    const std::uint64_t before = state_.fetch_add(change, std::memory_order_seq_cst);
    WEFT_ASSERT(!searching || searching_of(before) != 0);
  }

  // Worker `index`, which found work after announce() or woke from park(): unlist it. False when
  // a waker already did (and counted it as searching).
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
    state_.fetch_sub(parked_one, std::memory_order_relaxed);
    return true;
  }

  // A worker that a waker unlisted, now running: counts it as searching, so submitters leave the
  // burst to it.
  void begin_search() {
    // relaxed: a submitter that misses the new searcher wakes one more worker, which costs a
    // wake, never progress; the end of searching is what the no-lost-wake-up argument orders.
    state_.fetch_add(searching_one, std::memory_order_relaxed);
  }

  // A searching worker found work. True when it was the last searcher: the caller then calls
  // wake_one(), so work left behind it gets a worker (the head of this file).
  bool end_search() {
    // seq_cst: orders the end of this search after any submitter's load that saw it counted,
    // and before the caller's wake_one() load (the argument at the head of this file).
    const std::uint64_t before = state_.fetch_sub(searching_one, std::memory_order_seq_cst);
    WEFT_ASSERT(searching_of(before) != 0);
    return searching_of(before) == 1;
  }

  // After publishing work: unlists one parked worker and returns its index (the caller unparks
  // it); none when no worker is parked or one is searching already.
  std::size_t wake_one() {
    // seq_cst: the load half of the submitter's store-load pair (the head of this file); pairs
    // with the seq_cst read-modify-writes in announce() and end_search().
    if (!wake_wanted(state_.load(std::memory_order_seq_cst))) return none;
    sync::lock_guard<sync::mutex> hold(lock_);
    if (stack_.empty()) return none;
    const std::size_t index = stack_.back();
    stack_.pop_back();
    listed_[index] = 0;
    // relaxed: under lock_ (see withdraw()).
    state_.fetch_sub(parked_one, std::memory_order_relaxed);
    return index;
  }

  // Shutdown: unlists every worker; the caller unparks them all.
  void wake_all() {
    sync::lock_guard<sync::mutex> hold(lock_);
    for (std::size_t i : stack_) listed_[i] = 0;
    const std::uint64_t n = stack_.size();
    stack_.clear();
    // relaxed: under lock_, and the stopping thread unparks every worker after this.
    state_.fetch_sub(n * parked_one, std::memory_order_relaxed);
  }

  // Any thread: whether a wake_one() now would wake a worker (an estimate, for cheap wake
  // decisions where a missed wake costs only parallelism, not progress).
  bool wake_wanted_approx() const noexcept {
    // relaxed: an estimate (see the comment above).
    return wake_wanted(state_.load(std::memory_order_relaxed));
  }

  // Any thread: how many workers are listed (an estimate, for stats).
  std::size_t parked_approx() const noexcept {
    // relaxed: an estimate.
    return static_cast<std::size_t>(state_.load(std::memory_order_relaxed) & count_mask);
  }

 private:
  static constexpr unsigned searching_shift = 32;
  static constexpr std::uint64_t count_mask = (std::uint64_t{1} << searching_shift) - 1;
  static constexpr std::uint64_t parked_one = 1;
  static constexpr std::uint64_t searching_one = std::uint64_t{1} << searching_shift;

  static constexpr std::uint64_t searching_of(std::uint64_t state) noexcept { return state >> searching_shift; }
  static constexpr bool wake_wanted(std::uint64_t state) noexcept {
    return (state & count_mask) != 0 && searching_of(state) == 0;
  }

  sync::mutex lock_;
  std::vector<std::uint8_t> listed_;
  std::vector<std::size_t> stack_;
  sync::atomic<std::uint64_t> state_{0};
};

}  // namespace weft::detail
