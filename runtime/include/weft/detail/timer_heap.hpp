// weft/detail/timer_heap.hpp — one loop's timers, ordered by (deadline, arming sequence).
//
// Owner thread only. A timer_node is reference-counted (plainly: one thread) by the heap or the
// macrotask queue that holds it and by its arming party (a sleeping leaf, a user timer entry).
// Expiry moves a node from the heap to the macrotask queue; running it marks it fired and calls
// on_fire(). Cancelling marks the node; a cancelled node is skipped wherever it is, and no longer
// keeps the loop's run() alive. Ties on the deadline fire in arming order, so the order of timer
// callbacks is a function of the program, never of addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <weft/detail/runnable.hpp>
#include <weft/platform/clock.hpp>

namespace weft::detail {

class timer_heap;

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
  instant deadline() const noexcept { return deadline_; }

 protected:
  virtual ~timer_node() = default;
  // Called on the owner thread, as a macrotask, once the deadline has passed.
  virtual void on_fire() = 0;

 private:
  friend class timer_heap;
  std::uint32_t refs_ = 1;  // the arming party's reference
  bool fired_ = false;
  bool cancelled_ = false;
  bool armed_ = false;      // in the heap (counted by the heap's armed count)
  instant deadline_{};
  std::uint64_t sequence_ = 0;
  timer_heap* heap_ = nullptr;
};

class timer_heap {
 public:
  timer_heap() = default;
  timer_heap(const timer_heap&) = delete;
  timer_heap& operator=(const timer_heap&) = delete;
  ~timer_heap();

  // Arms `node` for `deadline`; the heap takes its own reference.
  void arm(timer_node* node, instant deadline);
  // Cancels `node` wherever it is (heap, macrotask queue, or already fired: then nothing).
  void cancel(timer_node* node) noexcept;

  // Earliest deadline of an armed, uncancelled timer.
  std::optional<instant> next_deadline();
  // Moves every timer whose deadline is <= now to `out`, in (deadline, sequence) order.
  std::size_t expire(instant now, runnable_queue& out);
  // Armed and not cancelled.
  std::size_t armed() const noexcept { return armed_count_; }
  bool has_expired(instant now);

 private:
  struct entry {
    instant deadline;
    std::uint64_t sequence;
    timer_node* node;
  };
  static bool later(const entry& a, const entry& b) noexcept {
    return a.deadline != b.deadline ? a.deadline > b.deadline : a.sequence > b.sequence;
  }
  void pop_top() noexcept;
  void drop_cancelled_top() noexcept;

  std::vector<entry> heap_;  // min-heap by (deadline, sequence); unbounded: one per live timer
  std::uint64_t next_sequence_ = 0;
  std::size_t armed_count_ = 0;
};

}  // namespace weft::detail
