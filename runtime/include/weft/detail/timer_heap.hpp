// weft/detail/timer_heap.hpp — one loop's timers, ordered by (deadline, arming sequence).
//
// Owner thread only. A timer_node is reference-counted (plainly: one thread) by the heap or the
// macrotask queue that holds it and by its arming party (a sleeping leaf, a user timer entry).
// Expiry moves a node from the heap to the macrotask queue; running it marks it fired and calls
// on_fire(). Ties on the deadline fire in arming order, so the order of timer callbacks is a
// function of the program, never of addresses.
//
// Two stores hold the armed timers. Most timers are armed with the same delay as the one armed
// just before (a sleep or timeout of a fixed length), so their deadlines arrive in order: a timer
// whose deadline is not earlier than the last one in the *run* is appended to it, a list in
// (deadline, sequence) order, linked through the nodes. Any other goes into an indexed 4-ary
// min-heap, where each armed node knows its slot. The earliest timer is the earlier of the run's
// first and the heap's top. Invariants: the run is sorted by (deadline, sequence), since a node
// is appended only after one that is not later and sequences increase; every armed node is in
// exactly one store and knows which; a cancelled node is in neither.
//
// Cancelling removes a node from wherever it is at once (no placeholder stays behind) and drops
// the store's reference; on_cancel() lets the node drop what only its firing would have used (a
// sleep's waker, and with it its task). A node that already expired sits in the macrotask queue
// until its turn, where run() skips it. Costs, with n armed timers: arm O(1) into the run, else
// O(log n); cancel O(1) from the run, else O(log n); next_deadline O(1); each expiry O(1) from
// the run, else O(log n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <weft/detail/runnable.hpp>
#include <weft/platform/clock.hpp>

namespace weft::detail {

class timer_heap;

// Children per heap slot. Every level a removal sifts through writes the moved node's slot, a
// cache miss when many timers are armed; four children halve the levels of a binary heap, and
// their entries share two cache lines.
inline constexpr std::size_t timer_heap_arity = 4;

class timer_node : public runnable {
 public:
  timer_node() noexcept : runnable(runnable_kind::callback) {}

  void run() override;
  void discard() noexcept override { release(); }

  void retain() noexcept { ++refs_; }
  void release() noexcept {
    WEFT_ASSERT(refs_ > 0);
    if (--refs_ == 0) delete this;
  }

  bool fired() const noexcept { return fired_; }
  bool cancelled() const noexcept { return cancelled_; }
  bool armed() const noexcept { return where_ != store::none; }
  instant deadline() const noexcept { return deadline_; }

 protected:
  virtual ~timer_node() = default;
  // Called on the owner thread, as a macrotask, once the deadline has passed.
  virtual void on_fire() = 0;
  // Called on the owner thread when the timer is cancelled, after it left the heap: drop what
  // only the firing would have used, so a timer that will never fire keeps nothing alive.
  virtual void on_cancel() noexcept {}

 private:
  friend class timer_heap;
  enum class store : std::uint8_t { none, heap, run };

  std::uint32_t refs_ = 1;  // the arming party's reference
  bool fired_ = false;
  bool cancelled_ = false;
  store where_ = store::none;  // which store holds it while armed
  std::size_t heap_slot_ = 0;  // in the heap: its index there
  timer_node* run_prev_ = nullptr;  // in the run: its neighbours (null at either end)
  timer_node* run_next_ = nullptr;
  instant deadline_{};
  std::uint64_t sequence_ = 0;
};

class timer_heap {
 public:
  timer_heap() = default;
  timer_heap(const timer_heap&) = delete;
  timer_heap& operator=(const timer_heap&) = delete;
  ~timer_heap();

  // Arms `node` for `deadline`; the store takes its own reference.
  void arm(timer_node* node, instant deadline);
  // Cancels `node` wherever it is: armed, it is removed and the store's reference dropped; in the
  // macrotask queue it is skipped when its turn comes; fired: nothing more. Either way
  // on_cancel() runs (once).
  void cancel(timer_node* node) noexcept;
  // Cancels every armed timer, earliest first (loop shutdown).
  void cancel_all() noexcept;

  // Earliest deadline of an armed timer. O(1).
  std::optional<instant> next_deadline() const noexcept;
  // Moves every timer whose deadline is <= now to `out`, in (deadline, sequence) order.
  std::size_t expire(instant now, runnable_queue& out);
  // Armed timers (a cancelled timer is never among them).
  std::size_t armed() const noexcept { return heap_.size() + run_size_; }
  // Entries held by both stores; the same number, named for callers that check what is retained.
  std::size_t size() const noexcept { return heap_.size() + run_size_; }
  bool has_expired(instant now) const noexcept;

 private:
  // The deadline and sequence are copied into the entry so that sifting compares without
  // touching the nodes.
  struct entry {
    instant deadline;
    std::uint64_t sequence;
    timer_node* node;
  };
  static bool earlier(const entry& a, const entry& b) noexcept {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence;
  }
  static std::size_t parent_of(std::size_t slot) noexcept { return (slot - 1) / timer_heap_arity; }
  void place(std::size_t slot, const entry& e) noexcept;
  void sift_up(std::size_t slot) noexcept;
  void sift_down(std::size_t slot) noexcept;
  // Takes the node at `slot` out of the heap (its reference passes to the caller).
  timer_node* remove_at(std::size_t slot) noexcept;
  void run_append(timer_node* node) noexcept;
  void run_unlink(timer_node* node) noexcept;
  // The armed timer due first, or null when none is armed.
  timer_node* earliest() const noexcept;
  // Takes `node`, armed, out of its store (its reference passes to the caller).
  void take_out(timer_node* node) noexcept;

  std::vector<entry> heap_;  // min-heap by (deadline, sequence); unbounded: one per armed timer
  timer_node* run_head_ = nullptr;  // the run: in (deadline, sequence) order, one per armed timer
  timer_node* run_tail_ = nullptr;
  std::size_t run_size_ = 0;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace weft::detail
