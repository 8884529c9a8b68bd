// timer_heap.cpp — see timer_heap.hpp.
#include <algorithm>

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
  for (entry& e : heap_) e.node->release();
}

void timer_heap::arm(timer_node* node, instant deadline) {
  WEFT_ASSERT(!node->armed_);
  WEFT_ASSERT(!node->cancelled_);
  node->retain();
  node->armed_ = true;
  node->fired_ = false;
  node->deadline_ = deadline;
  node->sequence_ = next_sequence_++;
  node->heap_ = this;
  heap_.push_back(entry{deadline, node->sequence_, node});
  std::push_heap(heap_.begin(), heap_.end(), &later);
  ++armed_count_;
}

void timer_heap::cancel(timer_node* node) noexcept {
  if (node->cancelled_) return;
  node->cancelled_ = true;
  if (node->armed_) {
    WEFT_ASSERT(armed_count_ > 0);
    --armed_count_;  // stays in the heap until it reaches the top; skipped there
  }
}

void timer_heap::pop_top() noexcept {
  std::pop_heap(heap_.begin(), heap_.end(), &later);
  heap_.pop_back();
}

void timer_heap::drop_cancelled_top() noexcept {
  while (!heap_.empty() && heap_.front().node->cancelled_) {
    timer_node* node = heap_.front().node;
    pop_top();
    node->armed_ = false;
    node->release();
  }
}

std::optional<instant> timer_heap::next_deadline() {
  drop_cancelled_top();
  if (heap_.empty()) return std::nullopt;
  return heap_.front().deadline;
}

bool timer_heap::has_expired(instant now) {
  const auto next = next_deadline();
  return next && *next <= now;
}

std::size_t timer_heap::expire(instant now, runnable_queue& out) {
  std::size_t fired = 0;
  for (;;) {
    drop_cancelled_top();
    if (heap_.empty() || heap_.front().deadline > now) break;
    timer_node* node = heap_.front().node;
    pop_top();
    node->armed_ = false;
    WEFT_ASSERT(armed_count_ > 0);
    --armed_count_;
    out.push_back(node);  // the heap's reference moves to the macrotask queue
    ++fired;
  }
  return fired;
}

}  // namespace weft::detail
