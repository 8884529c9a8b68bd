// timer_heap_test.cpp — the loop's timer heap on its own, with fake instants: cancelling removes a
// timer from anywhere in the heap and drops the heap's reference at once; what stays fires in
// (deadline, arming order), checked against a plain sorted model.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include <weft/detail/timer_heap.hpp>
#include <weft/platform/random.hpp>

namespace {

using weft::detail::runnable;
using weft::detail::runnable_queue;
using weft::detail::timer_heap;
using weft::detail::timer_node;

weft::instant at(std::int64_t ns) { return weft::instant{} + weft::duration(ns); }

// A timer that appends its name to a log when it fires and notes its own destruction.
class named_timer final : public timer_node {
 public:
  named_timer(int name, std::vector<int>* fired, int* destroyed) : name_(name), fired_(fired), destroyed_(destroyed) {}
  ~named_timer() override { ++*destroyed_; }

 private:
  void on_fire() override { fired_->push_back(name_); }
  int name_;
  std::vector<int>* fired_;
  int* destroyed_;
};

// Expires everything due at `now` and runs it, as the loop's macrotask step would.
std::size_t expire_and_run(timer_heap& heap, weft::instant now) {
  runnable_queue due;
  const std::size_t moved = heap.expire(now, due);
  while (runnable* r = due.pop_front()) r->run();
  return moved;
}

}  // namespace

TEST(timer_heap, a_cancelled_timer_leaves_the_heap_and_is_freed_at_once) {
  std::vector<int> fired;
  int destroyed = 0;
  timer_heap heap;
  auto* node = new named_timer(1, &fired, &destroyed);
  heap.arm(node, at(1'000));
  EXPECT_EQ(heap.armed(), 1u);
  EXPECT_EQ(heap.size(), 1u);
  heap.cancel(node);
  EXPECT_EQ(heap.armed(), 0u);
  EXPECT_EQ(heap.size(), 0u);  // no entry left behind until the deadline
  node->release();             // the arming party's reference was the last one
  EXPECT_EQ(destroyed, 1);
  EXPECT_FALSE(heap.next_deadline().has_value());
  EXPECT_EQ(expire_and_run(heap, at(2'000)), 0u);
  EXPECT_TRUE(fired.empty());
}

TEST(timer_heap, cancelling_timers_in_the_middle_of_the_heap_keeps_the_rest_in_deadline_order) {
  std::vector<int> fired;
  int destroyed = 0;
  timer_heap heap;
  // Names are the deadlines times ten plus a tie-breaking digit in arming order.
  const std::vector<std::pair<int, std::int64_t>> plan = {
      {50, 5}, {10, 1}, {90, 9}, {30, 3}, {70, 7}, {31, 3}, {20, 2}, {80, 8}, {60, 6}, {32, 3}, {40, 4},
  };
  std::vector<named_timer*> nodes;
  for (const auto& [name, deadline] : plan) {
    nodes.push_back(new named_timer(name, &fired, &destroyed));
    heap.arm(nodes.back(), at(deadline));
  }
  // Neither the earliest nor the last armed: each sits inside the heap. One of them is the middle
  // of a tie, so the tie's order must survive the removal too.
  for (std::size_t i : {4u, 5u, 8u, 0u}) {
    const std::size_t before = heap.size();
    heap.cancel(nodes[i]);
    EXPECT_EQ(heap.size(), before - 1);
    EXPECT_EQ(heap.armed(), before - 1);
  }
  ASSERT_TRUE(heap.next_deadline().has_value());
  EXPECT_EQ(*heap.next_deadline(), at(1));
  EXPECT_EQ(expire_and_run(heap, at(100)), plan.size() - 4);
  EXPECT_EQ(fired, (std::vector<int>{10, 20, 30, 32, 40, 80, 90}));
  EXPECT_EQ(heap.size(), 0u);
  for (named_timer* n : nodes) n->release();
  EXPECT_EQ(destroyed, static_cast<int>(plan.size()));
}

namespace {

// Random arms, cancels and expiries, checked after every step against a sorted model. Few
// distinct deadlines, so ties are common. `fixed_delay`: most timers are armed with one delay, as
// a server's timeouts are, so their deadlines arrive in order and take the in-order run; the rest
// (and every timer otherwise) have a random delay, and land in the heap unless they happen to
// follow the run's last. A fixed seed, so a failure replays.
void check_against_sorted_model(std::uint64_t seed, bool fixed_delay) {
  constexpr int operations = 20'000;
  constexpr std::int64_t deadline_spread_ns = 64;
  weft::platform::random rng(seed);
  std::vector<int> fired;
  int destroyed = 0;
  timer_heap heap;
  std::vector<named_timer*> nodes;                  // every node made; index = name
  std::set<std::pair<std::int64_t, int>> model;     // armed: (deadline, name); names grow with arming
  std::vector<int> expected_fired;
  std::int64_t now_ns = 0;
  for (int op = 0; op < operations; ++op) {
    const std::uint64_t pick = rng.below(10);
    if (pick < 5) {
      const int name = static_cast<int>(nodes.size());
      const bool usual = fixed_delay && rng.below(8) != 0;
      const std::int64_t delay =
          usual ? deadline_spread_ns / 2 : static_cast<std::int64_t>(rng.below(deadline_spread_ns));
      const std::int64_t deadline = now_ns + delay;
      nodes.push_back(new named_timer(name, &fired, &destroyed));
      heap.arm(nodes.back(), at(deadline));
      model.emplace(deadline, name);
    } else if (pick < 8) {
      if (model.empty()) continue;
      auto victim = std::next(model.begin(), static_cast<std::ptrdiff_t>(rng.below(model.size())));
      heap.cancel(nodes[static_cast<std::size_t>(victim->second)]);
      model.erase(victim);
    } else {
      now_ns += static_cast<std::int64_t>(rng.below(deadline_spread_ns / 4));
      while (!model.empty() && model.begin()->first <= now_ns) {
        expected_fired.push_back(model.begin()->second);
        model.erase(model.begin());
      }
      expire_and_run(heap, at(now_ns));
      ASSERT_EQ(fired, expected_fired) << "after operation " << op;
    }
    ASSERT_EQ(heap.size(), model.size()) << "after operation " << op;
    ASSERT_EQ(heap.armed(), model.size());
    if (model.empty()) {
      ASSERT_FALSE(heap.next_deadline().has_value());
    } else {
      ASSERT_EQ(heap.next_deadline(), at(model.begin()->first));
    }
  }
  for (named_timer* n : nodes) {
    heap.cancel(n);
    n->release();
  }
  EXPECT_EQ(heap.size(), 0u);
  EXPECT_EQ(destroyed, static_cast<int>(nodes.size()));
}

}  // namespace

TEST(timer_heap, random_arms_cancels_and_expiries_match_a_sorted_model) {
  check_against_sorted_model(20'261'204, /*fixed_delay=*/false);
}

TEST(timer_heap, timers_of_one_delay_mixed_with_others_match_a_sorted_model) {
  check_against_sorted_model(20'261'206, /*fixed_delay=*/true);
}

TEST(timer_heap, a_timer_cancelled_inside_the_in_order_run_leaves_it_and_ties_keep_arming_order) {
  std::vector<int> fired;
  int destroyed = 0;
  timer_heap heap;
  // Deadlines that never fall: each follows the last, so all take the run; then two earlier
  // ones, which cannot, one of them a tie with the run's first (armed later, so it fires after).
  const std::vector<std::pair<int, std::int64_t>> plan = {
      {10, 10}, {20, 20}, {21, 20}, {30, 30}, {40, 40}, {5, 5}, {11, 10},
  };
  std::vector<named_timer*> nodes;
  for (const auto& [name, deadline] : plan) {
    nodes.push_back(new named_timer(name, &fired, &destroyed));
    heap.arm(nodes.back(), at(deadline));
  }
  EXPECT_EQ(heap.size(), plan.size());
  for (std::size_t i : {2u, 3u, 4u}) {  // inside the run, then its last
    const std::size_t before = heap.size();
    heap.cancel(nodes[i]);
    EXPECT_EQ(heap.size(), before - 1);
  }
  // After the run's last left, a timer earlier than it but not than the new last follows on.
  nodes.push_back(new named_timer(35, &fired, &destroyed));
  heap.arm(nodes.back(), at(35));
  EXPECT_EQ(heap.next_deadline(), at(5));
  EXPECT_EQ(expire_and_run(heap, at(10)), 3u);
  EXPECT_EQ(fired, (std::vector<int>{5, 10, 11}));
  EXPECT_EQ(expire_and_run(heap, at(100)), 2u);
  EXPECT_EQ(fired, (std::vector<int>{5, 10, 11, 20, 35}));
  EXPECT_EQ(heap.size(), 0u);
  for (named_timer* n : nodes) n->release();
  EXPECT_EQ(destroyed, static_cast<int>(nodes.size()));
}
