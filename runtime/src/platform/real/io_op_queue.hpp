// io_op_queue.hpp — an intrusive FIFO of io_operations, linked through driver_next.
//
// An operation is on at most one queue at a time (its driver_next is that queue's link), so
// moving it between queues never allocates and cannot fail. The queue is unbounded on purpose:
// every entry is an operation the caller submitted and keeps alive, so the caller's own
// submissions bound it. Not thread-safe: the owner of the queue (or its lock) serialises access.
#pragma once

#include <cstddef>

#include <weft/platform/assert.hpp>
#include <weft/platform/io_request.hpp>

namespace weft::platform {

class io_op_queue {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }
  io_operation* front() const noexcept { return head_; }

  void push_back(io_operation& op) noexcept {
    op.driver_next = nullptr;
    if (tail_ != nullptr) {
      tail_->driver_next = &op;
    } else {
      head_ = &op;
    }
    tail_ = &op;
    ++size_;
  }

  io_operation* pop_front() noexcept {
    io_operation* op = head_;
    if (op == nullptr) return nullptr;
    head_ = op->driver_next;
    if (head_ == nullptr) tail_ = nullptr;
    op->driver_next = nullptr;
    WEFT_ASSERT(size_ > 0);
    --size_;
    return op;
  }

  // Unlinks `op` if it is on this queue (a walk: queues are per fd and direction, so short).
  bool remove(io_operation& op) noexcept {
    io_operation* prev = nullptr;
    for (io_operation* at = head_; at != nullptr; prev = at, at = at->driver_next) {
      if (at != &op) continue;
      if (prev != nullptr) {
        prev->driver_next = at->driver_next;
      } else {
        head_ = at->driver_next;
      }
      if (tail_ == at) tail_ = prev;
      at->driver_next = nullptr;
      WEFT_ASSERT(size_ > 0);
      --size_;
      return true;
    }
    return false;
  }

  // Moves every entry of `other` to the back of this queue, in order (one at a time: the lists
  // moved are a poll's worth of completions).
  void splice_back(io_op_queue& other) noexcept {
    while (io_operation* op = other.pop_front()) push_back(*op);
  }

 private:
  io_operation* head_ = nullptr;
  io_operation* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace weft::platform
