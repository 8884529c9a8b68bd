// timer_heap.cpp — see timer_heap.hpp.
#include <weft/detail/timer_heap.hpp>

namespace weft::detail {

void timer_node::run() {
  struct release_on_exit {
    timer_node* node;
    ~release_on_exit() { node->release(); }  // the macrotask queue's reference
  } guard{this};
  if (cancelled_) return;
  fired_ = true;
  on_fire();
}

timer_heap::~timer_heap() {
  for (entry& e : heap_) {
    e.node->heap_slot_ = timer_node::not_in_heap;
    e.node->release();
  }
}

void timer_heap::arm(timer_node* node, instant deadline) {
  WEFT_ASSERT(!node->armed());
  WEFT_ASSERT(!node->cancelled_);
  heap_.push_back(entry{deadline, next_sequence_, node});  // first: if it throws, nothing changed
  node->retain();
  node->fired_ = false;
  node->deadline_ = deadline;
  node->sequence_ = next_sequence_++;
  sift_up(heap_.size() - 1);
}

void timer_heap::cancel(timer_node* node) noexcept {
  if (node->cancelled_) return;
  node->cancelled_ = true;
  // The heap is whole again before on_cancel() runs: what it drops (a waker, a task cell, the
  // task's output) may run code that arms or cancels other timers.
  const bool was_armed = node->armed();
  if (was_armed) {
    timer_node* removed = remove_at(node->heap_slot_);
    WEFT_ASSERT(removed == node);
  }
  node->on_cancel();
  if (was_armed) node->release();  // the heap's reference; the caller still holds its own
}

void timer_heap::cancel_all() noexcept {
  while (!heap_.empty()) cancel(heap_.front().node);
}

void timer_heap::place(std::size_t slot, const entry& e) noexcept {
  heap_[slot] = e;
  e.node->heap_slot_ = slot;
}

void timer_heap::sift_up(std::size_t slot) noexcept {
  const entry moving = heap_[slot];
  while (slot > 0) {
    const std::size_t parent = parent_of(slot);
    if (!earlier(moving, heap_[parent])) break;
    place(slot, heap_[parent]);
    slot = parent;
  }
  place(slot, moving);
}

void timer_heap::sift_down(std::size_t slot) noexcept {
  const entry moving = heap_[slot];
  const std::size_t size = heap_.size();
  for (;;) {
    const std::size_t first = timer_heap_arity * slot + 1;
    if (first >= size) break;
    const std::size_t end = size - first > timer_heap_arity ? first + timer_heap_arity : size;
    std::size_t child = first;  // the earliest of the children
    for (std::size_t c = first + 1; c < end; ++c) {
      if (earlier(heap_[c], heap_[child])) child = c;
    }
    if (!earlier(heap_[child], moving)) break;
    place(slot, heap_[child]);
    slot = child;
  }
  place(slot, moving);
}

timer_node* timer_heap::remove_at(std::size_t slot) noexcept {
  WEFT_ASSERT(slot < heap_.size());
  timer_node* node = heap_[slot].node;
  const entry last = heap_.back();
  heap_.pop_back();
  if (slot < heap_.size()) {
    // The last entry fills the hole; it may belong above it (a cancelled node deep in another
    // branch) or below it.
    place(slot, last);
    if (slot > 0 && earlier(heap_[slot], heap_[parent_of(slot)])) {
      sift_up(slot);
    } else {
      sift_down(slot);
    }
  }
  node->heap_slot_ = timer_node::not_in_heap;
  return node;
}

std::optional<instant> timer_heap::next_deadline() const noexcept {
  if (heap_.empty()) return std::nullopt;
  return heap_.front().deadline;
}

bool timer_heap::has_expired(instant now) const noexcept {
  return !heap_.empty() && heap_.front().deadline <= now;
}

std::size_t timer_heap::expire(instant now, runnable_queue& out) {
  std::size_t fired = 0;
  while (has_expired(now)) {
    timer_node* node = remove_at(0);
    out.push_back(node);  // the heap's reference moves to the macrotask queue
    ++fired;
  }
  return fired;
}

}  // namespace weft::detail
