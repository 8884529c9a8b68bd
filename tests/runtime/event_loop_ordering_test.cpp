// event_loop_ordering_test.cpp — the order of one turn: driver events, remote inbox, every
// microtask, one macrotask; remote work never lands in the middle of a checkpoint.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::remote_gate;

using log_t = std::vector<std::string>;

TEST(event_loop_ordering, microtasks_run_before_a_macrotask_queued_earlier) {
  weft::event_loop loop;
  log_t log;
  loop.queue_macrotask([&] { log.push_back("macro"); });
  loop.queue_microtask([&] { log.push_back("micro1"); });
  loop.queue_microtask([&] { log.push_back("micro2"); });
  loop.run();
  EXPECT_EQ(log, (log_t{"micro1", "micro2", "macro"}));
}

TEST(event_loop_ordering, one_macrotask_runs_per_turn_and_its_microtasks_run_before_the_next) {
  weft::event_loop loop;
  log_t log;
  for (int i = 1; i <= 3; ++i) {
    loop.queue_macrotask([&log, &loop, i] {
      log.push_back("M" + std::to_string(i));
      loop.queue_microtask([&log, i] { log.push_back("m" + std::to_string(i)); });
    });
  }
  loop.run();
  EXPECT_EQ(log, (log_t{"M1", "m1", "M2", "m2", "M3", "m3"}));
}

TEST(event_loop_ordering, a_microtask_queued_by_a_microtask_runs_in_the_same_checkpoint) {
  weft::event_loop loop;
  log_t log;
  loop.queue_macrotask([&] { log.push_back("macro"); });
  loop.queue_microtask([&] {
    log.push_back("a");
    loop.queue_microtask([&] {
      log.push_back("b");
      loop.queue_microtask([&] { log.push_back("c"); });
    });
  });
  loop.run();
  EXPECT_EQ(log, (log_t{"a", "b", "c", "macro"}));
}

TEST(event_loop_ordering, a_macrotask_queued_by_a_macrotask_waits_for_the_next_turn) {
  weft::event_loop loop;
  log_t log;
  loop.queue_macrotask([&] {
    log.push_back("M1");
    loop.queue_macrotask([&] { log.push_back("M3"); });
  });
  loop.queue_macrotask([&] { log.push_back("M2"); });
  loop.run();
  EXPECT_EQ(log, (log_t{"M1", "M2", "M3"}));
}

TEST(event_loop_ordering, a_spawned_tasks_first_poll_is_a_microtask) {
  weft::event_loop loop;
  log_t log;
  loop.queue_macrotask([&] { log.push_back("macro"); });
  auto h = loop.spawn([&]() -> weft::task<void> {
    log.push_back("task");
    co_return;
  });
  loop.queue_microtask([&] { log.push_back("micro"); });
  loop.run();
  EXPECT_EQ(log, (log_t{"task", "micro", "macro"}));
}

TEST(event_loop_ordering, a_task_woken_by_a_macrotask_resumes_before_the_next_macrotask) {
  weft::event_loop loop;
  log_t log;
  weft_test::gate g;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await weft_test::gate_leaf{&g};
    log.push_back("task resumed");
  });
  loop.queue_macrotask([&] {
    log.push_back("M1");
    g.open = true;
    g.waiter.wake();
  });
  loop.queue_macrotask([&] { log.push_back("M2"); });
  loop.run();
  EXPECT_EQ(log, (log_t{"M1", "task resumed", "M2"}));
}

TEST(event_loop_ordering, macrotasks_and_microtasks_each_run_in_fifo_order) {
  weft::event_loop loop;
  std::vector<int> micro;
  std::vector<int> macro;
  for (int i = 0; i < 50; ++i) {
    loop.queue_macrotask([&macro, i] { macro.push_back(i); });
    loop.queue_microtask([&micro, i] { micro.push_back(i); });
  }
  loop.run();
  ASSERT_EQ(micro.size(), 50u);
  ASSERT_EQ(macro.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(micro[static_cast<std::size_t>(i)], i);
    EXPECT_EQ(macro[static_cast<std::size_t>(i)], i);
  }
}

TEST(event_loop_ordering, remote_macrotasks_from_one_thread_run_in_submission_order_after_local_ones) {
  weft::event_loop loop;
  auto handle = loop.handle();
  std::vector<int> order;
  loop.queue_macrotask([&] { order.push_back(-1); });
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(handle.queue_macrotask([&order, i] { order.push_back(i); }));
  });
  producer.join();
  loop.run();
  ASSERT_EQ(order.size(), 101u);
  EXPECT_EQ(order.front(), -1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i) + 1], i);
}

TEST(event_loop_ordering, a_remote_macrotask_queued_mid_checkpoint_runs_after_the_checkpoint_ends) {
  // A microtask chain is running; in its first link another thread queues a macrotask (and we
  // wait until that submission was accepted). The remote macrotask must not run before the chain
  // is over, and it comes after the macrotask that was already queued locally.
  weft::event_loop loop;
  auto handle = loop.handle();
  log_t log;
  std::atomic<bool> accepted{false};
  std::thread producer;
  constexpr int chain = 20;
  std::function<void(int)> link = [&](int i) {
    log.push_back("m" + std::to_string(i));
    if (i == 0) {
      producer = std::thread([&] {
        const bool ok = static_cast<bool>(handle.queue_macrotask([&] { log.push_back("remote"); }));
        accepted.store(ok, std::memory_order_release);
      });
      ASSERT_TRUE(weft_test::eventually([&] { return accepted.load(std::memory_order_acquire); }));
    }
    if (i + 1 < chain) loop.queue_microtask([&link, i] { link(i + 1); });
  };
  loop.queue_macrotask([&] { log.push_back("local"); });
  loop.queue_microtask([&] { link(0); });
  loop.run();
  producer.join();
  log_t expected;
  for (int i = 0; i < chain; ++i) expected.push_back("m" + std::to_string(i));
  expected.push_back("local");
  expected.push_back("remote");
  EXPECT_EQ(log, expected);
}

TEST(event_loop_ordering, a_remote_wake_mid_checkpoint_polls_the_task_only_in_a_later_checkpoint) {
  weft::event_loop loop;
  log_t log;
  remote_gate g;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await g.wait();
    log.push_back("task");
  });
  loop.run_until_stalled();
  ASSERT_TRUE(g.has_waiter());
  std::thread waker_thread;
  std::atomic<bool> woken{false};
  constexpr int chain = 20;
  std::function<void(int)> link = [&](int i) {
    log.push_back("m" + std::to_string(i));
    if (i == 0) {
      waker_thread = std::thread([&] {
        g.open_and_wake();
        woken.store(true, std::memory_order_release);
      });
      ASSERT_TRUE(weft_test::eventually([&] { return woken.load(std::memory_order_acquire); }));
    }
    if (i + 1 < chain) loop.queue_microtask([&link, i] { link(i + 1); });
  };
  loop.queue_macrotask([&] { log.push_back("local"); });
  loop.queue_microtask([&] { link(0); });
  loop.run();
  waker_thread.join();
  log_t expected;
  for (int i = 0; i < chain; ++i) expected.push_back("m" + std::to_string(i));
  expected.push_back("local");
  expected.push_back("task");
  EXPECT_EQ(log, expected);
  EXPECT_TRUE(h.is_finished());
}

TEST(event_loop_ordering, a_timer_callback_is_a_macrotask_followed_by_its_microtasks) {
  weft::event_loop loop;
  log_t log;
  // Both timers share a deadline, so they expire in the same turn; each still runs as its own
  // macrotask, with a checkpoint in between.
  const auto delay = 2ms;
  loop.set_timeout(delay, [&] {
    log.push_back("T1");
    loop.queue_microtask([&] { log.push_back("t1 micro"); });
  });
  loop.set_timeout(delay, [&] {
    log.push_back("T2");
    loop.queue_microtask([&] { log.push_back("t2 micro"); });
  });
  loop.run();
  EXPECT_EQ(log, (log_t{"T1", "t1 micro", "T2", "t2 micro"}));
}

// ---- owner-only entry points ---------------------------------------------------------------------

TEST(event_loop_ordering, queue_microtask_from_another_thread_throws_usage_error) {
  weft::event_loop loop;
  bool threw = false;
  bool ran = false;
  std::thread other([&] {
    try {
      loop.queue_microtask([&] { ran = true; });
    } catch (const weft::usage_error&) {
      threw = true;
    }
  });
  other.join();
  EXPECT_TRUE(threw);
  loop.run();
  EXPECT_FALSE(ran);
}

TEST(event_loop_ordering, the_loops_own_queue_macrotask_and_spawn_from_another_thread_throw_usage_error) {
  weft::event_loop loop;
  int usage_errors = 0;
  std::thread other([&] {
    try {
      loop.queue_macrotask([] {});
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
    try {
      (void)loop.spawn([]() -> weft::task<void> { co_return; });
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
    try {
      (void)loop.set_timeout(1ms, [] {});
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
  });
  other.join();
  EXPECT_EQ(usage_errors, 3);
  EXPECT_EQ(loop.live_tasks(), 0u);
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(event_loop_ordering, the_loops_thread_handle_also_works_from_its_own_thread) {
  weft::event_loop loop;
  log_t log;
  loop.queue_macrotask([&] { log.push_back("local"); });
  ASSERT_TRUE(loop.handle().queue_macrotask([&] { log.push_back("via handle"); }));
  EXPECT_TRUE(loop.handle().is_current());
  loop.run();
  EXPECT_EQ(log, (log_t{"local", "via handle"}));
}
