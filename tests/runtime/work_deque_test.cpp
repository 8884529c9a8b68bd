// work_deque_test.cpp — a worker's local run queue of the work-stealing pool: FIFO for its owner,
// full at its capacity, pop_half takes the oldest half, a steal hands back the oldest of its batch
// and moves the rest in order, indices wrap around 2^32; and under threads, one owner and two
// thieves take every item exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include <weft/detail/work_deque.hpp>

namespace {

constexpr std::uint32_t small_capacity = 8;
using small_deque = weft::detail::work_deque<int, small_capacity>;

// Items 0..n-1 as distinct addresses.
std::vector<int> numbered(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

TEST(work_deque, the_owner_pops_in_push_order_and_gets_null_when_empty) {
  small_deque q;
  auto items = numbered(5);
  EXPECT_TRUE(q.empty_approx());
  EXPECT_EQ(q.pop(), nullptr);
  for (int& x : items) ASSERT_TRUE(q.push(&x));
  EXPECT_EQ(q.size_approx(), 5u);
  for (int& x : items) EXPECT_EQ(q.pop(), &x);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_TRUE(q.empty_approx());
}

TEST(work_deque, a_push_into_a_full_ring_fails_and_changes_nothing) {
  small_deque q;
  auto items = numbered(small_capacity + 1);
  for (std::uint32_t i = 0; i < small_capacity; ++i) ASSERT_TRUE(q.push(&items[i]));
  EXPECT_FALSE(q.push(&items[small_capacity]));
  EXPECT_EQ(q.size_approx(), std::size_t{small_capacity});
  EXPECT_EQ(q.pop(), &items[0]);  // the refused push did not overwrite the oldest
  EXPECT_TRUE(q.push(&items[small_capacity]));
  for (std::uint32_t i = 1; i <= small_capacity; ++i) EXPECT_EQ(q.pop(), &items[i]);
  EXPECT_EQ(q.pop(), nullptr);
}

TEST(work_deque, the_default_capacity_is_256) {
  EXPECT_EQ(weft::detail::work_deque_capacity, 256u);
  weft::detail::work_deque<int> q;
  auto items = numbered(257);
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(q.push(&items[static_cast<std::size_t>(i)]));
  EXPECT_FALSE(q.push(&items[256]));
}

TEST(work_deque, pop_half_takes_the_oldest_ceil_half_for_every_size) {
  for (std::uint32_t n = 0; n <= small_capacity; ++n) {
    SCOPED_TRACE(n);
    small_deque q;
    auto items = numbered(static_cast<int>(n));
    for (int& x : items) ASSERT_TRUE(q.push(&x));
    int* out[small_deque::pop_half_out_min] = {};
    const std::size_t k = q.pop_half(out, small_deque::pop_half_out_min);
    ASSERT_EQ(k, std::size_t{n - n / 2});
    for (std::size_t i = 0; i < k; ++i) EXPECT_EQ(out[i], &items[i]);
    for (std::size_t i = k; i < n; ++i) EXPECT_EQ(q.pop(), &items[i]);
    EXPECT_EQ(q.pop(), nullptr);
  }
}

TEST(work_deque, a_steal_returns_the_oldest_and_moves_the_rest_of_the_half_in_order) {
  small_deque victim;
  small_deque mine;
  auto items = numbered(5);
  for (int& x : items) ASSERT_TRUE(victim.push(&x));
  EXPECT_EQ(victim.steal_half_into(mine), &items[0]);  // ceil(5/2) = 3 taken: one returned
  EXPECT_EQ(mine.size_approx(), 2u);
  EXPECT_EQ(victim.size_approx(), 2u);
  EXPECT_EQ(mine.pop(), &items[1]);
  EXPECT_EQ(mine.pop(), &items[2]);
  EXPECT_EQ(mine.pop(), nullptr);
  EXPECT_EQ(victim.pop(), &items[3]);
  EXPECT_EQ(victim.pop(), &items[4]);
  EXPECT_EQ(victim.pop(), nullptr);
}

TEST(work_deque, a_steal_of_one_item_leaves_the_destination_empty) {
  small_deque victim;
  small_deque mine;
  int only = 7;
  ASSERT_TRUE(victim.push(&only));
  EXPECT_EQ(victim.steal_half_into(mine), &only);
  EXPECT_TRUE(mine.empty_approx());
  EXPECT_TRUE(victim.empty_approx());
}

TEST(work_deque, a_steal_from_an_empty_ring_returns_null_and_moves_nothing) {
  small_deque victim;
  small_deque mine;
  int mine_item = 1;
  ASSERT_TRUE(mine.push(&mine_item));
  EXPECT_EQ(victim.steal_half_into(mine), nullptr);
  EXPECT_EQ(mine.size_approx(), 1u);
  EXPECT_EQ(mine.pop(), &mine_item);
}

TEST(work_deque, a_steal_takes_only_what_the_destination_has_room_for_plus_the_returned_one) {
  small_deque victim;
  small_deque mine;
  auto theirs = numbered(small_capacity);
  auto own = numbered(small_capacity - 2);  // room for 2
  for (int& x : theirs) ASSERT_TRUE(victim.push(&x));
  for (int& x : own) ASSERT_TRUE(mine.push(&x));
  EXPECT_EQ(victim.steal_half_into(mine), &theirs[0]);  // half is 4; room 2 + the returned one
  EXPECT_EQ(mine.size_approx(), std::size_t{small_capacity});
  EXPECT_EQ(victim.size_approx(), std::size_t{small_capacity - 3});
  for (int& x : own) EXPECT_EQ(mine.pop(), &x);
  EXPECT_EQ(mine.pop(), &theirs[1]);
  EXPECT_EQ(mine.pop(), &theirs[2]);
  EXPECT_EQ(victim.pop(), &theirs[3]);

  // A full destination still takes one item, the returned one.
  small_deque full;
  auto filler = numbered(small_capacity);
  for (int& x : filler) ASSERT_TRUE(full.push(&x));
  EXPECT_EQ(victim.steal_half_into(full), &theirs[4]);
  EXPECT_EQ(full.size_approx(), std::size_t{small_capacity});
  EXPECT_EQ(victim.size_approx(), std::size_t{small_capacity - 5});
}

TEST(work_deque, indices_wrapping_around_2_to_the_32_keep_fifo_size_and_fullness) {
  // The ring starts 3 pushes before the 32-bit wrap of its counters.
  const std::uint32_t first = std::numeric_limits<std::uint32_t>::max() - 2;
  small_deque q(first);
  small_deque mine(first);
  auto items = numbered(4 * small_capacity);
  std::size_t next_in = 0;
  std::size_t next_out = 0;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    while (q.push(&items[next_in])) ++next_in;  // fill up to the refused push
    ASSERT_EQ(q.size_approx(), std::size_t{small_capacity});
    for (int i = 0; i < 3; ++i) ASSERT_EQ(q.pop(), &items[next_out++]);
    ASSERT_EQ(q.steal_half_into(mine), &items[next_out++]);  // n = 5: 3 taken
    ASSERT_EQ(mine.pop(), &items[next_out++]);
    ASSERT_EQ(mine.pop(), &items[next_out++]);
    ASSERT_EQ(mine.pop(), nullptr);
    ASSERT_EQ(q.size_approx(), 2u);
    ASSERT_EQ(q.pop(), &items[next_out++]);
    ASSERT_EQ(q.pop(), &items[next_out++]);
    ASSERT_EQ(q.pop(), nullptr);
    ASSERT_EQ(next_out, next_in);
  }
}

namespace {

// The stress: an owner pushes every item once (spilling half of a full ring aside, as the pool
// spills to its shared queue) and pops some, leaving the rest; two thieves steal from it and from
// each other and pop what they stole. Every item is taken exactly once, and its contents (written before its push)
// are seen by whoever takes it.
constexpr int stress_items = 100'000;
constexpr std::uint32_t stress_capacity = 16;

struct stress_item {
  int value = -1;             // written by the owner before the push
  std::atomic<int> taken{0};  // how many takers took it
};
using stress_deque = weft::detail::work_deque<stress_item, stress_capacity>;

void take(stress_item* item, int index_base, std::vector<stress_item>& items) {
  ASSERT_NE(item, nullptr);
  const auto index = static_cast<int>(item - items.data());
  EXPECT_EQ(item->value, index + index_base);
  item->taken.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TEST(work_deque, one_owner_and_two_thieves_take_every_item_exactly_once) {
  constexpr int base = 1'000'000;  // value = index + base, so a stale read shows
  std::vector<stress_item> items(stress_items);
  stress_deque owner_ring;
  stress_deque thief_rings[2];
  std::atomic<bool> owner_done{false};
  std::atomic<int> stolen[2] = {0, 0};

  std::atomic<int> thieves_started{0};

  std::thread owner([&] {
    // Start racing only when both thieves run.
    while (thieves_started.load(std::memory_order_acquire) < 2) std::this_thread::yield();
    stress_item* spill[stress_deque::pop_half_out_min];
    for (int i = 0; i < stress_items; ++i) {
      stress_item* const item = &items[static_cast<std::size_t>(i)];
      item->value = i + base;
      if (!owner_ring.push(item)) {
        const std::size_t k = owner_ring.pop_half(spill, stress_deque::pop_half_out_min);
        for (std::size_t j = 0; j < k; ++j) take(spill[j], base, items);
        if (!owner_ring.push(item)) take(item, base, items);  // thieves took nothing: still full
      }
      if (i % 3 == 0) {
        if (stress_item* got = owner_ring.pop()) take(got, base, items);
      }
    }
    // The last items are left to the thieves, so every run has steals.
    while (!owner_ring.empty_approx()) std::this_thread::yield();
    owner_done.store(true, std::memory_order_release);
  });

  auto thief = [&](int self) {
    stress_deque& mine = thief_rings[self];
    stress_deque& other = thief_rings[1 - self];
    thieves_started.fetch_add(1, std::memory_order_release);  // pairs with the owner's acquire
    for (;;) {
      // Read before the steal: once the owner is done and its ring is empty, nothing more comes.
      const bool done = owner_done.load(std::memory_order_acquire);
      stress_item* got = owner_ring.steal_half_into(mine);
      if (got == nullptr) got = other.steal_half_into(mine);
      if (got == nullptr) {
        if (done) return;
        std::this_thread::yield();
        continue;
      }
      take(got, base, items);
      stolen[self].fetch_add(1, std::memory_order_relaxed);
      while (stress_item* more = mine.pop()) take(more, base, items);
    }
  };
  std::thread t0(thief, 0);
  std::thread t1(thief, 1);
  owner.join();
  t0.join();
  t1.join();

  int missing = 0;
  int repeated = 0;
  for (const stress_item& item : items) {
    const int n = item.taken.load(std::memory_order_relaxed);
    if (n == 0) ++missing;
    if (n > 1) ++repeated;
  }
  EXPECT_GT(stolen[0].load() + stolen[1].load(), 0);  // the last ring's worth at least
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(repeated, 0);
  EXPECT_TRUE(owner_ring.empty_approx());
  EXPECT_TRUE(thief_rings[0].empty_approx());
  EXPECT_TRUE(thief_rings[1].empty_approx());
}
