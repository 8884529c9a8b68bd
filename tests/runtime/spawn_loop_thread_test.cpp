// spawn_loop_thread_test.cpp — spawn_loop_thread: a child thread with its own loop, whose run()
// the parent's run() waits for.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;

TEST(spawn_loop_thread, the_child_runs_on_its_own_thread_with_its_own_loop) {
  weft::event_loop parent;
  std::atomic<std::uint64_t> child_thread{0};
  std::atomic<weft::event_loop*> child_loop{nullptr};
  auto w = parent.spawn_loop_thread([&](weft::event_loop& loop) {
    child_thread.store(weft_test::thread_id());
    child_loop.store(&loop);
  });
  parent.run();
  EXPECT_NE(child_thread.load(), 0u);
  EXPECT_NE(child_thread.load(), weft_test::thread_id());
  EXPECT_NE(child_loop.load(), nullptr);
  EXPECT_NE(child_loop.load(), &parent);
  EXPECT_TRUE(w.is_finished());
}

TEST(spawn_loop_thread, the_parents_run_waits_until_the_child_loop_finished) {
  weft::event_loop parent;
  std::atomic<bool> child_done{false};
  // Read before the child exists: its sleep starts after this, so a run() that waited for the
  // child has waited at least the sleep. (Read after spawn_loop_thread(), the child may already
  // be sleeping, and the wait measures a little less.)
  const auto start = std::chrono::steady_clock::now();
  auto w = parent.spawn_loop_thread([&](weft::event_loop& loop) {
    (void)loop.spawn([&]() -> weft::task<void> {
      co_await weft::sleep(20ms);
      child_done.store(true);
    });
  });
  EXPECT_EQ(parent.live_loop_threads(), 1u);
  parent.run();
  EXPECT_TRUE(child_done.load());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  EXPECT_EQ(parent.live_loop_threads(), 0u);
  EXPECT_TRUE(w.is_finished());
}

TEST(spawn_loop_thread, a_child_entry_without_a_loop_parameter_also_runs) {
  weft::event_loop parent;
  std::atomic<int> ran{0};
  auto w = parent.spawn_loop_thread([&] { ran.fetch_add(1); });
  parent.run();
  EXPECT_EQ(ran.load(), 1);
}

TEST(spawn_loop_thread, the_loop_thread_handle_reaches_the_child_loop_at_once) {
  weft::event_loop parent;
  std::atomic<std::uint64_t> ran_on{0};
  std::atomic<std::uint64_t> child_thread{0};
  std::atomic<bool> release_child{false};
  auto w = parent.spawn_loop_thread([&](weft::event_loop& loop) {
    child_thread.store(weft_test::thread_id());
    // Keep the child's run() going until the parent's macrotask arrived.
    (void)loop.spawn([&]() -> weft::task<void> {
      while (!release_child.load()) co_await weft::sleep(1ms);
    });
  });
  weft::thread_handle child = w.handle();  // a copy: queue_macrotask is not const
  ASSERT_TRUE(child.valid());
  ASSERT_TRUE(child.queue_macrotask([&] {
    ran_on.store(weft_test::thread_id());
    release_child.store(true);
  }));
  parent.run();
  EXPECT_EQ(ran_on.load(), child_thread.load());
}

TEST(spawn_loop_thread, a_child_can_queue_work_back_to_the_parent_while_the_parent_runs) {
  weft::event_loop parent;
  auto parent_handle = parent.handle();
  std::uint64_t ran_on = 0;
  std::atomic<bool> accepted{false};
  auto w = parent.spawn_loop_thread([&] {
    // The parent's run() is waiting for this child, so its inbox is open.
    accepted.store(static_cast<bool>(parent_handle.queue_macrotask([&] { ran_on = weft_test::thread_id(); })));
  });
  parent.run();
  EXPECT_TRUE(accepted.load());
  EXPECT_EQ(ran_on, weft_test::thread_id());
}

TEST(spawn_loop_thread, several_children_are_all_awaited) {
  weft::event_loop parent;
  std::atomic<int> finished{0};
  for (int i = 0; i < 3; ++i) {
    (void)parent.spawn_loop_thread([&, i](weft::event_loop& loop) {
      loop.set_timeout(std::chrono::milliseconds(2 + 3 * i), [&] { finished.fetch_add(1); });
    });
  }
  EXPECT_EQ(parent.live_loop_threads(), 3u);
  parent.run();
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(parent.live_loop_threads(), 0u);
}

TEST(spawn_loop_thread, destroying_the_parent_without_running_it_joins_the_child) {
  std::atomic<bool> child_done{false};
  {
    weft::event_loop parent;
    (void)parent.spawn_loop_thread([&](weft::event_loop& loop) {
      loop.set_timeout(10ms, [&] { child_done.store(true); });
    });
  }
  EXPECT_TRUE(child_done.load());  // the destructor waited for the child thread
}

TEST(spawn_loop_thread, spawn_loop_thread_from_another_thread_throws_usage_error) {
  weft::event_loop parent;
  bool threw = false;
  std::thread other([&] {
    try {
      (void)parent.spawn_loop_thread([] {});
    } catch (const weft::usage_error&) {
      threw = true;
    }
  });
  other.join();
  EXPECT_TRUE(threw);
  EXPECT_EQ(parent.live_loop_threads(), 0u);
}

// The names the loop thread had before (they are deprecated: "worker" is the word for the
// runtime's pinned workers) still start and count one, for the release that keeps them.
TEST(spawn_loop_thread, the_deprecated_spawn_worker_names_still_start_a_loop_thread) {
  weft::event_loop parent;
  std::atomic<std::uint64_t> child_thread{0};
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  weft::worker_handle w = parent.spawn_worker([&](weft::event_loop&) { child_thread.store(weft_test::thread_id()); });
  EXPECT_EQ(parent.live_workers(), 1u);
#pragma GCC diagnostic pop
  parent.run();
  EXPECT_NE(child_thread.load(), 0u);
  EXPECT_NE(child_thread.load(), weft_test::thread_id());
  EXPECT_TRUE(w.is_finished());
  EXPECT_EQ(parent.live_loop_threads(), 0u);
}
