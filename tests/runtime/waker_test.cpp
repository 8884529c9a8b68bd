// waker_test.cpp — the waker contract: a wake schedules a poll (never a resume, never on the
// caller's thread); duplicates coalesce; spurious wakes are harmless; wakes come from any
// thread; clones may outlive their task and their loop.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::gate;
using weft_test::gate_leaf;
using weft_test::remote_gate;

TEST(waker, a_default_waker_is_invalid_and_waking_it_does_nothing) {
  weft::waker w;
  EXPECT_FALSE(w.valid());
  EXPECT_FALSE(static_cast<bool>(w));
  w.wake();
  w();
  weft::waker copy = w;
  EXPECT_FALSE(copy.valid());
  EXPECT_FALSE(w.will_wake(copy));  // two empty wakers wake nobody, so not "the same party"
}

TEST(waker, clones_of_one_tasks_waker_will_wake_each_other_and_not_another_tasks) {
  weft::event_loop loop;
  gate a;
  gate b;
  auto ha = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&a}; });
  auto hb = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&b}; });
  loop.run_until_stalled();
  ASSERT_TRUE(a.waiter.valid());
  ASSERT_TRUE(b.waiter.valid());
  const weft::waker a_clone = a.waiter;
  EXPECT_TRUE(a_clone.will_wake(a.waiter));
  EXPECT_FALSE(a_clone.will_wake(b.waiter));
  weft::waker moved = std::move(a.waiter);
  EXPECT_FALSE(a.waiter.valid());  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_TRUE(moved.will_wake(a_clone));
  // Clean up: let both finish.
  a.open = b.open = true;
  moved.wake();
  b.waiter.wake();
  loop.run_until_stalled();
  EXPECT_TRUE(ha.is_finished());
  EXPECT_TRUE(hb.is_finished());
}

TEST(waker, a_wake_on_the_owner_thread_does_not_poll_inline) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  loop.run_until_stalled();
  ASSERT_EQ(g.polls, 1);
  g.open = true;
  g.waiter.wake();
  EXPECT_EQ(g.polls, 1);  // queued, not polled
  EXPECT_FALSE(h.is_finished());
  loop.run_until_stalled();
  EXPECT_EQ(g.polls, 2);
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, duplicate_wakes_of_a_waiting_task_cause_one_poll) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  loop.run_until_stalled();
  ASSERT_EQ(g.polls, 1);
  g.open = true;
  for (int i = 0; i < 100; ++i) g.waiter.wake();
  loop.run_until_stalled();
  EXPECT_EQ(g.polls, 2);
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, a_task_woken_a_hundred_times_while_ready_resumes_exactly_once_per_readiness) {
  weft::event_loop loop;
  gate g;
  int resumes = 0;
  auto h = loop.spawn([&]() -> weft::task<void> {
    for (int round = 0; round < 3; ++round) {
      co_await gate_leaf{&g};
      ++resumes;
      g.open = false;  // the next await waits again
    }
  });
  loop.run_until_stalled();
  ASSERT_EQ(resumes, 0);
  for (int round = 1; round <= 3; ++round) {
    g.open = true;
    const weft::waker w = g.waiter;
    for (int i = 0; i < 100; ++i) w.wake();
    loop.run_until_stalled();
    EXPECT_EQ(resumes, round);
    // And waking the (now finished or re-waiting) task again does not resume it again.
    for (int i = 0; i < 100; ++i) w.wake();
    loop.run_until_stalled();
    EXPECT_EQ(resumes, round);
  }
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, spurious_wakes_poll_the_leaf_but_never_resume_the_task) {
  weft::event_loop loop;
  gate g;
  bool resumed = false;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await gate_leaf{&g};
    resumed = true;
  });
  loop.run_until_stalled();
  for (int i = 0; i < 10; ++i) {
    g.waiter.wake();  // nothing changed: spurious
    loop.run_until_stalled();
    EXPECT_FALSE(resumed);
    EXPECT_EQ(g.polls, 2 + i);  // each spurious wake costs exactly one poll
  }
  g.open = true;
  g.waiter.wake();
  loop.run_until_stalled();
  EXPECT_TRUE(resumed);
  EXPECT_TRUE(h.is_finished());
}

namespace {
// A leaf that wakes itself from inside its own poll `wakes` times, then is ready on the next poll:
// wakes while the task is running are coalesced into one re-poll.
struct self_waking_leaf {
  int* polls;
  int wakes;
  bool poll_ready(const weft::waker& w) {
    if (++*polls > 1) return true;
    for (int i = 0; i < wakes; ++i) w.wake();
    return false;
  }
  void await_resume() const noexcept {}
};
}  // namespace

TEST(waker, wakes_during_a_poll_coalesce_into_one_repoll) {
  weft::event_loop loop;
  int polls = 0;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await self_waking_leaf{&polls, 100}; });
  loop.run_until_stalled();
  EXPECT_EQ(polls, 2);
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, a_wake_from_another_thread_polls_the_task_on_its_own_thread) {
  weft::event_loop loop;
  remote_gate g;
  std::uint64_t resumed_on = 0;
  std::thread waker_thread;
  const int v = loop.block_on([&]() -> weft::task<int> {
    waker_thread = std::thread([&g] {
      weft_test::eventually([&] { return g.has_waiter(); });
      g.open_and_wake();
    });
    co_await g.wait();
    resumed_on = weft_test::thread_id();
    co_return 3;
  }());
  waker_thread.join();
  EXPECT_EQ(v, 3);
  EXPECT_EQ(resumed_on, weft_test::thread_id());
}

TEST(waker, many_threads_waking_many_times_complete_a_counting_wait) {
  // The task waits until every producer has incremented the counter; each increment is followed
  // by a wake. Lost wakes would hang block_on; extra ones must do no harm.
  constexpr int producers = 4;
  constexpr int increments = 2000;
  struct count_leaf {
    std::atomic<int>* counter;
    std::mutex* lock;
    weft::waker* slot;
    int* polls;
    bool poll_ready(const weft::waker& w) {
      ++*polls;
      {
        std::lock_guard<std::mutex> hold(*lock);
        *slot = w;
      }
      return counter->load(std::memory_order_acquire) == producers * increments;
    }
    void await_resume() const noexcept {}
  };
  weft::event_loop loop;
  std::atomic<int> counter{0};
  std::mutex lock;
  weft::waker slot;
  int polls = 0;
  std::vector<std::thread> threads;
  loop.block_on([&]() -> weft::task<void> {
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < increments; ++i) {
          counter.fetch_add(1, std::memory_order_release);
          weft::waker w;
          {
            std::lock_guard<std::mutex> hold(lock);
            w = slot;
          }
          w.wake();
        }
      });
    }
    co_await count_leaf{&counter, &lock, &slot, &polls};
  }());
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.load(), producers * increments);
  EXPECT_GE(polls, 1);
  EXPECT_LE(polls, producers * increments + 1);  // at most one poll per wake, plus the first
  slot.reset();
}

TEST(waker, a_clone_that_outlives_its_task_is_a_no_op) {
  weft::event_loop loop;
  weft::waker kept;
  auto h = loop.spawn([&]() -> weft::task<int> {
    kept = co_await weft::current_waker();
    co_return 1;
  });
  loop.run();
  ASSERT_TRUE(h.is_finished());
  ASSERT_TRUE(kept.valid());
  const std::size_t live_before = loop.live_tasks();
  kept.wake();
  kept.wake();
  EXPECT_EQ(loop.live_tasks(), live_before);
  loop.run_until_stalled();  // nothing was scheduled; nothing to poll
  EXPECT_EQ(h.join().value(), 1);
  std::thread other([&kept] { kept.wake(); });
  other.join();
  loop.run_until_stalled();
}

TEST(waker, a_clone_that_outlives_its_loop_is_a_no_op_on_any_thread) {
  weft::waker kept;
  weft::waker kept_for_other_thread;
  {
    weft::event_loop loop;
    gate g;
    auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
    loop.run_until_stalled();
    ASSERT_TRUE(g.waiter.valid());
    kept = g.waiter;
    kept_for_other_thread = g.waiter;
    // h is dropped (detached) and the loop destroyed with the task still waiting.
  }
  kept.wake();  // same thread, loop gone
  std::thread other([w = std::move(kept_for_other_thread)] {
    w.wake();
    w.wake();
  });
  other.join();
  EXPECT_TRUE(kept.valid());
  weft::waker copy = kept;  // cloning a dangling-target waker is fine too
  EXPECT_TRUE(copy.will_wake(kept));
}

TEST(waker, a_held_clone_does_not_keep_run_going) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<int> {
    co_await gate_leaf{&g};
    co_return 9;
  });
  const auto start = std::chrono::steady_clock::now();
  loop.run();  // returns although the task is suspended and its waker is held
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_FALSE(h.is_finished());
  EXPECT_EQ(loop.live_tasks(), 1u);
  // The task is still owned by the loop and continues at the next drive.
  g.open = true;
  g.waiter.wake();
  loop.run();
  EXPECT_EQ(h.join().value(), 9);
}

TEST(waker, a_wake_from_another_thread_after_run_returned_is_kept_for_the_next_drive) {
  weft::event_loop loop;
  remote_gate g;
  auto h = loop.spawn([&]() -> weft::task<int> {
    co_await g.wait();
    co_return 4;
  });
  loop.run();
  ASSERT_FALSE(h.is_finished());
  std::thread other([&] { g.open_and_wake(); });  // internal wakes bypass the closed inbox
  other.join();
  loop.run();
  ASSERT_TRUE(h.is_finished());
  EXPECT_EQ(h.join().value(), 4);
}

TEST(waker, wakes_racing_the_loops_destruction_are_harmless) {
  // Threads keep waking a task while its loop is destroyed under them: every wake must land
  // either in the inbox (then discarded by the destruction) or be refused by the dead inbox.
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    {
      weft::event_loop loop;
      gate g;
      auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
      loop.run_until_stalled();
      ASSERT_TRUE(g.waiter.valid());
      for (int t = 0; t < 3; ++t) {
        threads.emplace_back([w = g.waiter, &stop] {
          while (!stop.load(std::memory_order_relaxed)) w.wake();
          w.wake();
        });
      }
      std::this_thread::sleep_for(1ms);
      loop.run_ready_tasks();  // polls the task (spuriously) a few times
      EXPECT_FALSE(h.is_finished());
    }
    stop.store(true, std::memory_order_relaxed);
    for (auto& t : threads) t.join();
  }
}

// ---- wake by value: std::move(w).wake() ---------------------------------------------------------

TEST(waker, a_wake_by_value_queues_one_poll_and_leaves_the_waker_empty) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  loop.run_until_stalled();
  ASSERT_EQ(g.polls, 1);
  g.open = true;
  weft::waker w = std::move(g.waiter);
  std::move(w).wake();
  EXPECT_FALSE(w.valid());  // NOLINT(bugprone-use-after-move): used up by the wake
  EXPECT_EQ(g.polls, 1);    // queued, not polled inline
  loop.run_until_stalled();
  EXPECT_EQ(g.polls, 2);
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, a_wake_by_value_of_a_task_already_queued_coalesces) {
  // The second wake needs no poll: its clone's reference is dropped instead of queued (a leak or
  // a double free here is what the ASan build of this test would report).
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  loop.run_until_stalled();
  g.open = true;
  weft::waker first = g.waiter;
  weft::waker second = g.waiter;
  std::move(first).wake();
  std::move(second).wake();
  EXPECT_FALSE(second.valid());  // NOLINT(bugprone-use-after-move)
  loop.run_until_stalled();
  EXPECT_EQ(g.polls, 2);
  EXPECT_TRUE(h.is_finished());
}

TEST(waker, a_late_wake_by_value_of_a_finished_task_polls_nothing_and_frees_it_when_last) {
  weft::event_loop loop;
  weft::waker kept;
  {
    auto h = loop.spawn([&]() -> weft::task<int> {
      kept = co_await weft::current_waker();
      co_return 5;
    });
    loop.run();
    EXPECT_EQ(h.join().value(), 5);
  }
  const std::size_t live_before = loop.live_tasks();
  std::move(kept).wake();  // the last reference to the finished task's cell
  EXPECT_FALSE(kept.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(loop.live_tasks(), live_before);
  loop.run_until_stalled();
}

TEST(waker, a_wake_by_value_from_another_thread_polls_the_task_on_its_own_thread) {
  weft::event_loop loop;
  remote_gate g;
  std::uint64_t resumed_on = 0;
  std::thread waker_thread;
  const int v = loop.block_on([&]() -> weft::task<int> {
    waker_thread = std::thread([&g] {
      weft_test::eventually([&] { return g.has_waiter(); });
      g.open_and_wake(/*by_value=*/true);
    });
    co_await g.wait();
    resumed_on = weft_test::thread_id();
    co_return 6;
  }());
  waker_thread.join();
  EXPECT_EQ(v, 6);
  EXPECT_EQ(resumed_on, weft_test::thread_id());
}

namespace {
// A waker kind that counts what is called on it.
struct counting_target {
  int clones = 0;
  int wakes_by_ref = 0;
  int drops = 0;
  int wakes_by_value = 0;
};
weft::raw_waker counting_clone(void* data) noexcept;
void counting_wake_by_ref(void* data) noexcept { ++static_cast<counting_target*>(data)->wakes_by_ref; }
void counting_drop(void* data) noexcept { ++static_cast<counting_target*>(data)->drops; }
void counting_wake_by_value(void* data) noexcept { ++static_cast<counting_target*>(data)->wakes_by_value; }
constexpr weft::waker_vtable counting_without_by_value{&counting_clone, &counting_wake_by_ref, &counting_drop, nullptr};
constexpr weft::waker_vtable counting_with_by_value{&counting_clone, &counting_wake_by_ref, &counting_drop,
                                                    &counting_wake_by_value};
weft::raw_waker counting_clone(void* data) noexcept {
  ++static_cast<counting_target*>(data)->clones;
  return weft::raw_waker{&counting_without_by_value, data};
}
}  // namespace

TEST(waker, a_waker_kind_without_wake_by_value_is_woken_by_reference_then_dropped) {
  counting_target t;
  weft::waker w(weft::raw_waker{&counting_without_by_value, &t});
  std::move(w).wake();
  EXPECT_FALSE(w.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(t.wakes_by_ref, 1);
  EXPECT_EQ(t.drops, 1);
  EXPECT_EQ(t.clones, 0);
}

TEST(waker, a_waker_kind_with_wake_by_value_gets_that_call_alone) {
  counting_target t;
  weft::waker w(weft::raw_waker{&counting_with_by_value, &t});
  std::move(w).wake();
  EXPECT_FALSE(w.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(t.wakes_by_value, 1);
  EXPECT_EQ(t.wakes_by_ref, 0);
  EXPECT_EQ(t.drops, 0);  // the reference went with the wake
  weft::waker empty;
  std::move(empty).wake();  // an empty waker used up does nothing
  EXPECT_EQ(t.wakes_by_value, 1);
}
