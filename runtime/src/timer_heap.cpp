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
    e.node->where_ = timer_node::store::none;
    e.node->release();
  }
  while (timer_node* node = run_head_) {
    run_unlink(node);
    node->release();
  }
}

void timer_heap::arm(timer_node* node, instant deadline) {
  WEFT_ASSERT(!node->armed());
  WEFT_ASSERT(!node->cancelled_);
  // Not earlier than the run's last timer (whose sequence is smaller): its place is the run's end.
  const bool in_order = run_tail_ == nullptr || !(deadline < run_tail_->deadline_);
  if (!in_order) {
    heap_.push_back(entry{deadline, next_sequence_, node});  // first: if it throws, nothing changed
  }
  node->retain();
  node->fired_ = false;
  node->deadline_ = deadline;
  node->sequence_ = next_sequence_++;
  if (in_order) {
    run_append(node);
  } else {
    node->where_ = timer_node::store::heap;
    sift_up(heap_.size() - 1);
  }
}

void timer_heap::run_append(timer_node* node) noexcept {
  node->where_ = timer_node::store::run;
  node->run_prev_ = run_tail_;
  node->run_next_ = nullptr;
  (run_tail_ != nullptr ? run_tail_->run_next_ : run_head_) = node;
  run_tail_ = node;
  ++run_size_;
}

void timer_heap::run_unlink(timer_node* node) noexcept {
  WEFT_ASSERT(node->where_ == timer_node::store::run);
  (node->run_prev_ != nullptr ? node->run_prev_->run_next_ : run_head_) = node->run_next_;
  (node->run_next_ != nullptr ? node->run_next_->run_prev_ : run_tail_) = node->run_prev_;
  node->run_prev_ = node->run_next_ = nullptr;
  node->where_ = timer_node::store::none;
  --run_size_;
}

timer_node* timer_heap::earliest() const noexcept {
  if (heap_.empty()) return run_head_;
  if (run_head_ == nullptr) return heap_.front().node;
  const entry first_of_run{run_head_->deadline_, run_head_->sequence_, run_head_};
  return earlier(first_of_run, heap_.front()) ? run_head_ : heap_.front().node;
}

void timer_heap::take_out(timer_node* node) noexcept {
  if (node->where_ == timer_node::store::run) {
    run_unlink(node);
  } else {
    timer_node* removed = remove_at(node->heap_slot_);
    WEFT_ASSERT(removed == node);
    (void)removed;
  }
}

void timer_heap::cancel(timer_node* node) noexcept {
  if (node->cancelled_) return;
  node->cancelled_ = true;
  // Both stores are whole again before on_cancel() runs: what it drops (a waker, a task cell, the
  // task's output) may run code that arms or cancels other timers.
  const bool was_armed = node->armed();
  if (was_armed) take_out(node);
  node->on_cancel();
  if (was_armed) node->release();  // the store's reference; the caller still holds its own
}

void timer_heap::cancel_all() noexcept {
  while (timer_node* node = earliest()) cancel(node);
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
  node->where_ = timer_node::store::none;
  return node;
}

std::optional<instant> timer_heap::next_deadline() const noexcept {
  const timer_node* first = earliest();
  if (first == nullptr) return std::nullopt;
  return first->deadline_;
}

bool timer_heap::has_expired(instant now) const noexcept {
  // Either store's first due is enough: the earlier of the two is due then too.
  return (run_head_ != nullptr && run_head_->deadline_ <= now) || (!heap_.empty() && heap_.front().deadline <= now);
}

std::size_t timer_heap::expire(instant now, runnable_queue& out) {
  std::size_t fired = 0;
  while (timer_node* node = earliest()) {
    if (now < node->deadline_) break;
    take_out(node);
    out.push_back(node);  // the store's reference moves to the macrotask queue
    ++fired;
  }
  return fired;
}

}  // namespace weft::detail
