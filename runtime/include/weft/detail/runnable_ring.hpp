// weft/detail/runnable_ring.hpp — an unbounded FIFO of runnable pointers in one growing array.
//
// Not thread-safe: one thread, or a lock, serialises every call. Unlike runnable_queue it never
// touches the runnables it holds: moving a batch in or out reads and writes only pointers, a few
// cache lines, where walking links would take one dependent miss per (cold) runnable.
#pragma once

#include <cstddef>
#include <vector>

#include <weft/detail/runnable.hpp>

namespace weft::detail {

class runnable_ring {
 public:
  runnable_ring() noexcept = default;
  runnable_ring(const runnable_ring&) = delete;
  runnable_ring& operator=(const runnable_ring&) = delete;

  bool empty() const noexcept { return count_ == 0; }
  std::size_t size() const noexcept { return count_; }

  // Appends at the tail, doubling the array when it is full.
  void push_back(runnable* item) {
    if (count_ == slots_.size()) grow();
    slots_[(head_ + count_) & (slots_.size() - 1)] = item;
    ++count_;
  }
  // The oldest, or null when empty.
  runnable* pop_front() noexcept {
    if (count_ == 0) return nullptr;
    runnable* r = slots_[head_];
    head_ = (head_ + 1) & (slots_.size() - 1);
    --count_;
    return r;
  }
  // Copies up to `max` of the oldest into `out` (in order) and removes them; returns how many.
  std::size_t pop_front_into(runnable** out, std::size_t max) noexcept {
    const std::size_t n = count_ < max ? count_ : max;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < n; ++i) out[i] = slots_[(head_ + i) & mask];
    head_ = (head_ + n) & mask;  // an empty array's mask is all ones: head_ stays 0
    count_ -= n;
    return n;
  }
  // Removes every element into a runnable_queue, oldest first.
  runnable_queue take_all() noexcept {
    runnable_queue all;
    while (runnable* r = pop_front()) all.push_back(r);
    return all;
  }

 private:
  void grow() {
    std::vector<runnable*> bigger(slots_.empty() ? initial_capacity : slots_.size() * 2);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = slots_[(head_ + i) & mask];
    slots_.swap(bigger);
    head_ = 0;
  }
  static constexpr std::size_t initial_capacity = 64;  // a power of two, as every later size

  std::vector<runnable*> slots_;  // a power of two long (or empty)
  std::size_t head_ = 0;          // index of the oldest
  std::size_t count_ = 0;
};

}  // namespace weft::detail
