// weft/detail/runnable.hpp — the unit every run queue holds, and the intrusive FIFO of them.
//
// A runnable is either a task poll (the task cell itself) or a callback. It sits in at most one
// queue at a time, linked through `next`; whoever holds it in a queue owns one reference to it
// (for a task) or the object itself (for a callback). The queue never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <weft/platform/assert.hpp>

namespace weft::detail {

enum class runnable_kind : std::uint8_t {
  task_poll,   // a task cell: run() polls it; drained remote task wakes join the microtasks
  task_spawn,  // a task cell submitted from another thread, not yet adopted by its loop: the
               // drain adopts it (owned list) and queues its first poll
  callback,   // a callback: run() invokes it; drained remote callbacks join the macrotasks
};

class runnable {
 public:
  explicit runnable(runnable_kind kind) noexcept : kind_(kind) {}
  runnable(const runnable&) = delete;
  runnable& operator=(const runnable&) = delete;

  runnable_kind kind() const noexcept { return kind_; }
  void set_kind(runnable_kind kind) noexcept { kind_ = kind; }
  // Runs it and gives up the queue's ownership (a callback deletes itself afterwards).
  virtual void run() = 0;
  // Gives up the queue's ownership without running (shutdown, rejection).
  virtual void discard() noexcept = 0;

  runnable* next = nullptr;  // protected by the queue that holds this runnable

 protected:
  ~runnable() = default;

 private:
  runnable_kind kind_;
};

// Intrusive FIFO. Not thread-safe: the owner (one thread, or a lock) serialises every call.
class runnable_queue {
 public:
  runnable_queue() noexcept = default;
  runnable_queue(const runnable_queue&) = delete;
  runnable_queue& operator=(const runnable_queue&) = delete;
  runnable_queue(runnable_queue&& other) noexcept
      : head_(other.head_), tail_(other.tail_), size_(other.size_) {
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
  }

  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }

  void push_back(runnable* r) noexcept {
    WEFT_ASSERT(r != nullptr);
    WEFT_ASSERT(r->next == nullptr);
    if (tail_) {
      tail_->next = r;
    } else {
      head_ = r;
    }
    tail_ = r;
    ++size_;
  }

  runnable* pop_front() noexcept {
    runnable* r = head_;
    if (!r) return nullptr;
    head_ = r->next;
    if (!head_) tail_ = nullptr;
    r->next = nullptr;
    --size_;
    return r;
  }

  // Moves every element of `other` to the back of this queue, keeping their order.
  void splice_back(runnable_queue& other) noexcept {
    if (other.empty()) return;
    if (tail_) {
      tail_->next = other.head_;
    } else {
      head_ = other.head_;
    }
    tail_ = other.tail_;
    size_ += other.size_;
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
  }

  // Discards every element (front to back).
  void discard_all() noexcept {
    while (runnable* r = pop_front()) r->discard();
  }

 private:
  runnable* head_ = nullptr;
  runnable* tail_ = nullptr;
  std::size_t size_ = 0;
};

// A callback as a runnable: one allocation that holds the callable.
template <class F>
class callback_runnable final : public runnable {
 public:
  template <class G>
  explicit callback_runnable(G&& fn) : runnable(runnable_kind::callback), fn_(std::forward<G>(fn)) {}
  void run() override {
    struct deleter {
      callback_runnable* self;
      ~deleter() { delete self; }
    } cleanup{this};
    fn_();
  }
  void discard() noexcept override { delete this; }

 private:
  F fn_;
};

}  // namespace weft::detail
