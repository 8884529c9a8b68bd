// join_handle_test.cpp — join_handle<T>: awaiting, blocking join(), is_finished, detach on drop,
// abort (frame destroyed on the owner thread, joiner woken with `cancelled`), abort_on_drop.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::drop_probe;
using weft_test::drop_record;
using weft_test::gate;
using weft_test::gate_leaf;
using weft_test::remote_gate;

namespace {
weft::task<int> value_after_sleep(int v, std::chrono::milliseconds d) {
  co_await weft::sleep(d);
  co_return v;
}
}  // namespace

TEST(join_handle, awaiting_a_handle_gives_the_tasks_value) {
  weft::event_loop loop;
  const int v = loop.block_on([]() -> weft::task<int> {
    auto h = weft::spawn(value_after_sleep(5, 1ms));
    auto r = co_await h;
    co_return r.value();
  }());
  EXPECT_EQ(v, 5);
}

TEST(join_handle, the_result_is_delivered_once_and_awaiting_again_throws_usage_error) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> { co_return 1; });
  loop.run();
  ASSERT_TRUE(h.valid());
  EXPECT_EQ(h.join().value(), 1);
  EXPECT_FALSE(h.valid());
  EXPECT_THROW((void)h.join(), weft::usage_error);
  const bool threw = loop.block_on([&]() -> weft::task<bool> {
    try {
      (void)co_await h;
    } catch (const weft::usage_error&) {
      co_return true;
    }
    co_return false;
  }());
  EXPECT_TRUE(threw);
}

TEST(join_handle, is_finished_turns_true_exactly_when_the_task_completes) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  EXPECT_FALSE(h.is_finished());
  loop.run_until_stalled();
  EXPECT_FALSE(h.is_finished());
  g.open = true;
  g.waiter.wake();
  EXPECT_FALSE(h.is_finished());
  loop.run_until_stalled();
  EXPECT_TRUE(h.is_finished());
}

TEST(join_handle, task_ids_are_distinct_and_nonzero) {
  weft::event_loop loop;
  auto a = loop.spawn([]() -> weft::task<void> { co_return; });
  auto b = loop.spawn([]() -> weft::task<void> { co_return; });
  EXPECT_NE(a.task_id(), 0u);
  EXPECT_NE(b.task_id(), 0u);
  EXPECT_NE(a.task_id(), b.task_id());
  loop.run();
}

TEST(join_handle, a_blocking_join_from_another_thread_waits_for_the_task) {
  weft::event_loop loop;
  auto h = loop.spawn(value_after_sleep(8, 20ms));
  std::atomic<bool> task_done_seen_by_joiner{false};
  int joined_value = 0;
  std::thread joiner([&, handle = std::move(h)]() mutable {
    auto r = handle.join();
    task_done_seen_by_joiner.store(true);
    joined_value = r.value();
  });
  EXPECT_FALSE(task_done_seen_by_joiner.load());
  loop.run();  // drives the task; run() ends once the sleep fired and the task completed
  joiner.join();
  EXPECT_TRUE(task_done_seen_by_joiner.load());
  EXPECT_EQ(joined_value, 8);
}

TEST(join_handle, a_blocking_join_from_another_thread_sees_a_panic) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> {
    co_await weft::sleep(5ms);
    throw std::runtime_error("late failure");
  });
  weft::expected<int, weft::join_error> out = weft::unexpected(weft::join_error(weft::join_error::cancelled));
  std::thread joiner([&, handle = std::move(h)]() mutable { out = handle.join(); });
  loop.run();
  joiner.join();
  ASSERT_FALSE(out.has_value());
  EXPECT_TRUE(out.error().is_panicked());
  EXPECT_EQ(weft_test::what_of(out.error().exception()), "late failure");
}

TEST(join_handle, join_on_the_owner_thread_of_an_unfinished_task_throws_usage_error) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> { co_return 2; });
  EXPECT_THROW((void)h.join(), weft::usage_error);
  EXPECT_TRUE(h.valid());  // the failed join took nothing
  loop.run();
  EXPECT_EQ(h.join().value(), 2);  // finished: joining on the owner thread is fine now
}

TEST(join_handle, dropping_a_handle_detaches_and_the_task_still_runs) {
  weft::event_loop loop;
  bool ran_to_end = false;
  {
    auto h = loop.spawn([&]() -> weft::task<void> {
      co_await weft::sleep(1ms);
      ran_to_end = true;
    });
  }
  EXPECT_EQ(loop.live_tasks(), 1u);
  loop.run();
  EXPECT_TRUE(ran_to_end);
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(join_handle, an_unread_output_is_destroyed_exactly_once_whoever_drops_last) {
  weft::event_loop loop;
  drop_record before_completion;
  drop_record after_completion;
  {
    auto h = loop.spawn([&]() -> weft::task<std::unique_ptr<drop_probe>> {
      co_await weft::yield_now();
      co_return std::make_unique<drop_probe>(&before_completion);
    });
    // handle dropped before the task completes: the completer destroys the output
  }
  auto h2 = loop.spawn([&]() -> weft::task<std::unique_ptr<drop_probe>> {
    co_return std::make_unique<drop_probe>(&after_completion);
  });
  loop.run();
  EXPECT_EQ(before_completion.drops.load(), 1);
  EXPECT_EQ(after_completion.drops.load(), 0);  // still held in the cell for h2
  h2.detach();  // dropped after completion: the handle destroys it
  EXPECT_EQ(after_completion.drops.load(), 1);
}

TEST(join_handle, a_join_handle_can_be_awaited_from_a_task_on_another_loop) {
  weft::event_loop loop;
  auto h = loop.spawn(value_after_sleep(13, 5ms));
  int seen = 0;
  std::thread other([&, handle = std::move(h)]() mutable {
    weft::event_loop other_loop;
    seen = other_loop.block_on([&]() -> weft::task<int> {
      auto r = co_await handle;
      co_return r.value();
    }());
  });
  loop.run();
  other.join();
  EXPECT_EQ(seen, 13);
}

TEST(join_handle, a_moved_handle_delivers_the_result_and_the_source_is_empty) {
  weft::event_loop loop;
  auto a = loop.spawn([]() -> weft::task<int> { co_return 6; });
  weft::join_handle<int> b;
  EXPECT_FALSE(b.valid());
  b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state
  loop.run();
  EXPECT_EQ(b.join().value(), 6);
}

TEST(join_handle, joining_a_handle_that_never_had_a_task_does_not_claim_a_result_was_taken) {
  weft::join_handle<int> never;
  std::string what;
  try {
    (void)never.join();
  } catch (const weft::usage_error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("empty join_handle (default-constructed, moved from, detached"), std::string::npos) << what;
}

TEST(join_handle, a_rejected_handle_reports_rejected) {
  auto h = weft::join_handle<int>::rejected();
  EXPECT_TRUE(h.is_finished());
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().is_rejected());
}

TEST(join_handle, spawning_an_empty_task_is_rejected) {
  weft::event_loop loop;
  auto h = loop.spawn(weft::task<int>{});
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::join_error::rejected);
}

// ---- abort ---------------------------------------------------------------------------------------

TEST(join_handle, abort_destroys_the_frame_on_the_owner_thread_and_wakes_the_joiner_with_cancelled) {
  weft::event_loop loop;
  drop_record frame_local;
  bool continued = false;
  auto h = loop.spawn([&]() -> weft::task<int> {
    drop_probe local(&frame_local);
    co_await weft::sleep(10s);
    continued = true;
    co_return 1;
  });
  loop.run_until_stalled();
  ASSERT_EQ(frame_local.drops.load(), 0);
  // The joiner is a task on the same loop, suspended on the handle before the abort.
  std::vector<weft::join_error::kind> joiner_saw;
  auto joiner = loop.spawn([&]() -> weft::task<void> {
    auto r = co_await h;
    if (!r) joiner_saw.push_back(r.error().get_kind());
  });
  loop.run_until_stalled();
  ASSERT_TRUE(joiner_saw.empty());
  // Abort from another thread: the frame must still be destroyed here.
  std::thread aborter([&] {
    // abort() only touches the state word; handing the handle's address across is fine
    // because the owner thread does not touch `h` until join() below.
    h.abort();
  });
  aborter.join();
  EXPECT_EQ(frame_local.drops.load(), 0);  // not destroyed on the aborting thread
  const auto start = std::chrono::steady_clock::now();
  loop.run();  // the 10 s sleep must not hold run(): its timer goes with the frame
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(frame_local.drops.load(), 1);
  EXPECT_EQ(frame_local.last_thread.load(), weft_test::thread_id());
  EXPECT_FALSE(continued);
  EXPECT_EQ(joiner_saw, std::vector<weft::join_error::kind>{weft::join_error::cancelled});
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(join_handle, abort_before_the_first_poll_means_the_body_never_runs) {
  weft::event_loop loop;
  bool body_ran = false;
  auto h = loop.spawn([&]() -> weft::task<void> {
    body_ran = true;
    co_return;
  });
  h.abort();
  h.abort();  // twice is harmless
  loop.run();
  EXPECT_FALSE(body_ran);
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().is_cancelled());
}

TEST(join_handle, abort_of_a_finished_task_is_a_no_op) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> { co_return 77; });
  loop.run();
  ASSERT_TRUE(h.is_finished());
  h.abort();
  loop.run();
  auto r = h.join();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 77);
}

TEST(join_handle, a_blocking_joiner_on_another_thread_is_woken_by_an_abort) {
  weft::event_loop loop;
  remote_gate never;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await never.wait(); });
  loop.run_until_stalled();
  h.abort();  // requested here; carried out at the task's next poll, during run() below
  ASSERT_FALSE(h.is_finished());
  std::atomic<int> outcome{-1};
  std::thread joiner([&outcome, handle = std::move(h)]() mutable {
    auto r = handle.join();  // blocks until the owner processes the abort
    outcome.store(r.has_value() ? 100 : static_cast<int>(r.error().get_kind()));
  });
  std::this_thread::sleep_for(2ms);
  EXPECT_EQ(outcome.load(), -1);
  loop.run();
  joiner.join();
  EXPECT_EQ(outcome.load(), static_cast<int>(weft::join_error::cancelled));
}

TEST(join_handle, a_blocking_joiner_on_another_thread_is_woken_when_the_loop_is_destroyed) {
  std::atomic<int> outcome{-1};
  std::thread joiner;
  {
    remote_gate never;
    weft::event_loop loop;
    auto h = loop.spawn([&]() -> weft::task<void> { co_await never.wait(); });
    loop.run_until_stalled();
    joiner = std::thread([&outcome, handle = std::move(h)]() mutable {
      auto r = handle.join();
      outcome.store(r.has_value() ? 100 : static_cast<int>(r.error().get_kind()));
    });
    std::this_thread::sleep_for(2ms);
    EXPECT_EQ(outcome.load(), -1);
  }
  joiner.join();
  EXPECT_EQ(outcome.load(), static_cast<int>(weft::join_error::cancelled));
}

TEST(join_handle, a_task_aborted_while_awaiting_a_child_task_destroys_the_child_frame_too) {
  weft::event_loop loop;
  drop_record child_local;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await [](drop_record* r) -> weft::task<void> {
      drop_probe local(r);
      co_await weft::sleep(10s);
    }(&child_local);
  });
  loop.run_until_stalled();
  h.abort();
  loop.run();
  EXPECT_EQ(child_local.drops.load(), 1);
  EXPECT_TRUE(h.join().error().is_cancelled());
}

TEST(abort_on_drop, dropping_the_guard_aborts_the_task) {
  weft::event_loop loop;
  bool continued = false;
  {
    weft::abort_on_drop<void> guard(loop.spawn([&]() -> weft::task<void> {
      co_await weft::sleep(10s);
      continued = true;
    }));
    loop.run_until_stalled();
  }
  const auto start = std::chrono::steady_clock::now();
  loop.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_FALSE(continued);
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(abort_on_drop, the_guard_can_be_awaited_like_the_handle) {
  weft::event_loop loop;
  const int v = loop.block_on([]() -> weft::task<int> {
    weft::abort_on_drop<int> guard(weft::spawn(value_after_sleep(3, 1ms)));
    auto r = co_await guard;
    co_return r.value();
  }());
  EXPECT_EQ(v, 3);
}
