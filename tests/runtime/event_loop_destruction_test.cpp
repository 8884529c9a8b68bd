// event_loop_destruction_test.cpp — destroying a loop cancels its unfinished tasks on its own
// thread (joiners see `cancelled`), destroys queued work unrun, reports both counts to
// telemetry, and refuses later submissions.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::drop_probe;
using weft_test::drop_record;
using weft_test::gate;
using weft_test::gate_leaf;
using weft_test::recording_sink;

TEST(event_loop_destruction, unfinished_tasks_are_cancelled_on_the_owner_thread_and_counted) {
  auto sink = std::make_shared<recording_sink>();
  drop_record suspended_local;
  std::optional<weft::join_handle<int>> suspended;
  std::optional<weft::join_handle<int>> never_polled;
  std::optional<weft::join_handle<int>> finished;
  bool never_polled_ran = false;
  gate g;
  {
    weft::event_loop loop(weft_test::with_sink(sink));
    suspended = loop.spawn([&]() -> weft::task<int> {
      drop_probe local(&suspended_local);
      co_await gate_leaf{&g};
      co_return 1;
    });
    finished = loop.spawn([]() -> weft::task<int> { co_return 2; });
    loop.run_until_stalled();
    never_polled = loop.spawn([&]() -> weft::task<int> {
      never_polled_ran = true;
      co_return 3;
    });
    EXPECT_EQ(loop.live_tasks(), 2u);
  }
  EXPECT_EQ(suspended_local.drops.load(), 1);
  EXPECT_EQ(suspended_local.last_thread.load(), weft_test::thread_id());
  EXPECT_FALSE(never_polled_ran);
  EXPECT_TRUE(suspended->join().error().is_cancelled());
  EXPECT_TRUE(never_polled->join().error().is_cancelled());
  EXPECT_EQ(finished->join().value(), 2);
  const auto events = sink->events_of(weft::telemetry_kind::task_cancelled_at_shutdown);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 2u);
}

TEST(event_loop_destruction, queued_callbacks_are_destroyed_unrun_and_counted) {
  auto sink = std::make_shared<recording_sink>();
  drop_record dropped;
  bool ran = false;
  {
    weft::event_loop loop(weft_test::with_sink(sink));
    loop.queue_microtask([&ran, p = drop_probe(&dropped)] { ran = true; });
    loop.queue_macrotask([&ran, p = drop_probe(&dropped)] { ran = true; });
    loop.queue_macrotask([&ran, p = drop_probe(&dropped)] { ran = true; });
    std::thread remote([&] {
      ASSERT_TRUE(loop.handle().queue_macrotask([&ran, p = drop_probe(&dropped)] { ran = true; }));
    });
    remote.join();
    EXPECT_EQ(dropped.drops.load(), 0);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(dropped.drops.load(), 4);
  EXPECT_EQ(dropped.last_thread.load(), weft_test::thread_id());
  const auto events = sink->events_of(weft::telemetry_kind::discarded_at_shutdown);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 4u);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::task_cancelled_at_shutdown), 0u);
}

TEST(event_loop_destruction, a_loop_with_nothing_left_reports_nothing) {
  auto sink = std::make_shared<recording_sink>();
  {
    weft::event_loop loop(weft_test::with_sink(sink));
    auto h = loop.spawn([]() -> weft::task<void> { co_return; });
    loop.run();
  }
  EXPECT_EQ(sink->total(), 0u);
}

TEST(event_loop_destruction, pending_timer_callbacks_are_destroyed_unrun) {
  drop_record dropped;
  bool fired = false;
  {
    weft::event_loop loop;
    loop.set_timeout(1ms, [&fired, p = drop_probe(&dropped)] { fired = true; });
    (void)loop.set_interval(1ms, [&fired, p = drop_probe(&dropped)] { fired = true; });
    std::this_thread::sleep_for(3ms);  // due, but never driven
  }
  EXPECT_FALSE(fired);
  EXPECT_EQ(dropped.drops.load(), 2);
}

TEST(event_loop_destruction, a_joiner_task_on_another_loop_is_woken_with_cancelled) {
  weft::event_loop joiner_loop;
  std::optional<weft::join_handle<weft::join_error::kind>> watcher;
  {
    weft::event_loop doomed;
    gate g;
    auto victim = doomed.spawn([&]() -> weft::task<int> {
      co_await gate_leaf{&g};
      co_return 0;
    });
    doomed.run_until_stalled();
    watcher = joiner_loop.spawn([h = std::move(victim)]() mutable -> weft::task<weft::join_error::kind> {
      auto r = co_await h;
      co_return r.has_value() ? weft::join_error::rejected : r.error().get_kind();
    });
    joiner_loop.run_until_stalled();
    EXPECT_FALSE(watcher->is_finished());
  }
  joiner_loop.run_until_stalled();
  ASSERT_TRUE(watcher->is_finished());
  EXPECT_EQ(watcher->join().value(), weft::join_error::cancelled);
}

TEST(event_loop_destruction, a_frame_destroyed_at_shutdown_cannot_spawn_new_work) {
  // A destructor inside a frame that tries to spawn while the loop is being torn down gets a
  // `rejected` handle; it does not sneak a task past the shutdown.
  struct spawn_on_drop {
    std::optional<weft::join_error::kind>* outcome;
    ~spawn_on_drop() {
      weft::event_loop* loop = weft::event_loop::current();
      if (loop == nullptr) return;
      auto h = loop->spawn([]() -> weft::task<void> { co_return; });
      auto r = h.join();
      if (!r) *outcome = r.error().get_kind();
    }
  };
  std::optional<weft::join_error::kind> outcome;
  {
    weft::event_loop loop;
    gate g;
    auto h = loop.spawn([&]() -> weft::task<void> {
      spawn_on_drop guard{&outcome};
      co_await gate_leaf{&g};
    });
    loop.run_until_stalled();
  }
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(*outcome, weft::join_error::rejected);
}

TEST(event_loop_destruction, submissions_after_destruction_are_refused_with_closed) {
  weft::thread_handle handle;
  weft::waker kept;
  {
    weft::event_loop loop;
    handle = loop.handle();
    gate g;
    auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
    loop.run_until_stalled();
    kept = g.waiter;
  }
  auto r = handle.queue_macrotask([] {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::queue_error::closed);
  kept.wake();  // a wake of a task of a dead loop does nothing
}
