// event_loop_drive_test.cpp — the driving calls: run(), block_on(), run_until_stalled(),
// run_ready_tasks(); re-entry and off-thread driving are usage errors.
#include <gtest/gtest.h>

#include <atomic>
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
using weft_test::recording_sink;
using weft_test::remote_gate;

namespace {
using steady = std::chrono::steady_clock;

struct custom_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
  int code = 17;
};
}  // namespace

// ---- run -------------------------------------------------------------------------------------------

TEST(event_loop_run, run_on_an_empty_loop_returns_at_once) {
  weft::event_loop loop;
  const auto start = steady::now();
  loop.run();
  EXPECT_LT(steady::now() - start, 1s);
  EXPECT_FALSE(loop.is_driving());
}

TEST(event_loop_run, run_keeps_going_until_armed_timers_have_fired) {
  weft::event_loop loop;
  bool done = false;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await weft::sleep(15ms);
    done = true;
  });
  const auto start = steady::now();
  loop.run();
  EXPECT_TRUE(done);
  EXPECT_GE(steady::now() - start, 15ms);
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(event_loop_run, run_can_be_called_again_after_it_returned) {
  weft::event_loop loop;
  int runs = 0;
  loop.queue_macrotask([&] { ++runs; });
  loop.run();
  loop.queue_macrotask([&] { ++runs; });
  loop.run();
  EXPECT_EQ(runs, 2);
}

TEST(event_loop_run, current_is_the_driving_loop_inside_callbacks_and_null_outside) {
  EXPECT_EQ(weft::event_loop::current(), nullptr);
  weft::event_loop loop;
  EXPECT_EQ(weft::event_loop::current(), nullptr);  // constructed, not driving
  weft::event_loop* seen = nullptr;
  bool driving_seen = false;
  loop.queue_macrotask([&] {
    seen = weft::event_loop::current();
    driving_seen = loop.is_driving();
  });
  loop.run();
  EXPECT_EQ(seen, &loop);
  EXPECT_TRUE(driving_seen);
  EXPECT_EQ(weft::event_loop::current(), nullptr);
}

TEST(event_loop_run, a_run_started_on_another_thread_throws_usage_error) {
  weft::event_loop loop;
  int usage_errors = 0;
  std::thread other([&] {
    try {
      loop.run();
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
    try {
      loop.run_until_stalled();
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
    try {
      loop.run_ready_tasks();
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
    try {
      (void)loop.block_on([]() -> weft::task<int> { co_return 1; }());
    } catch (const weft::usage_error&) {
      ++usage_errors;
    }
  });
  other.join();
  EXPECT_EQ(usage_errors, 4);
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(event_loop_run, the_inbox_reopens_for_the_next_drive_after_run_closed_it) {
  weft::event_loop loop;
  auto handle = loop.handle();
  loop.run();
  {
    auto refused = handle.queue_macrotask([] {});
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error(), weft::queue_error::closed);
  }
  // During the next drive, another thread's submission is accepted and runs.
  bool ran = false;
  remote_gate submitted;
  std::thread producer;
  std::atomic<bool> accepted{false};
  loop.block_on([&]() -> weft::task<void> {
    producer = std::thread([&] {
      accepted.store(static_cast<bool>(handle.queue_macrotask([&] { ran = true; })));
      submitted.open_and_wake();
    });
    co_await submitted.wait();
  }());
  producer.join();
  EXPECT_TRUE(accepted.load());
  loop.run();  // the macrotask may still be queued after block_on returned
  EXPECT_TRUE(ran);
}

// ---- block_on ----------------------------------------------------------------------------------------

TEST(event_loop_block_on, block_on_returns_the_tasks_value) {
  weft::event_loop loop;
  EXPECT_EQ(loop.block_on([]() -> weft::task<std::string> {
              co_await weft::sleep(1ms);
              co_return "done";
            }()),
            "done");
}

TEST(event_loop_block_on, block_on_may_borrow_and_modify_the_callers_locals) {
  weft::event_loop loop;
  std::vector<int> numbers{1, 2, 3};
  const std::string prefix = "sum=";
  auto summarise = [](std::vector<int>& v, const std::string& p) -> weft::task<std::string> {
    co_await weft::yield_now();
    v.push_back(4);
    int total = 0;
    for (int n : v) total += n;
    co_return p + std::to_string(total);
  };
  EXPECT_EQ(loop.block_on(summarise(numbers, prefix)), "sum=10");
  EXPECT_EQ(numbers, (std::vector<int>{1, 2, 3, 4}));
}

TEST(event_loop_block_on, the_tasks_frame_is_destroyed_before_block_on_returns) {
  weft::event_loop loop;
  drop_record frame_local;
  loop.block_on([](drop_record* r) -> weft::task<void> {
    drop_probe local(r);
    co_await weft::yield_now();
  }(&frame_local));
  EXPECT_EQ(frame_local.drops.load(), 1);
}

TEST(event_loop_block_on, block_on_rethrows_what_the_task_threw_with_its_type) {
  weft::event_loop loop;
  try {
    loop.block_on([]() -> weft::task<void> {
      co_await weft::yield_now();
      throw custom_failure("bad input");
    }());
    ADD_FAILURE() << "block_on did not throw";
  } catch (const custom_failure& e) {
    EXPECT_STREQ(e.what(), "bad input");
    EXPECT_EQ(e.code, 17);
  }
}

TEST(event_loop_block_on, block_on_runs_other_ready_work_meanwhile) {
  weft::event_loop loop;
  bool other_ran = false;
  loop.queue_macrotask([&] { other_ran = true; });
  loop.block_on([]() -> weft::task<void> { co_await weft::sleep(5ms); }());
  EXPECT_TRUE(other_ran);
}

TEST(event_loop_block_on, block_on_waits_for_a_wake_from_another_thread) {
  weft::event_loop loop;
  remote_gate g;
  std::thread opener([&] {
    ASSERT_TRUE(weft_test::eventually([&] { return g.has_waiter(); }));
    std::this_thread::sleep_for(5ms);
    g.open_and_wake();
  });
  const int v = loop.block_on([&]() -> weft::task<int> {
    co_await g.wait();
    co_return 5;
  }());
  opener.join();
  EXPECT_EQ(v, 5);
}

// ---- run_until_stalled / run_ready_tasks -------------------------------------------------------------

TEST(event_loop_stalled, run_until_stalled_runs_ready_work_and_does_not_block_on_a_pending_timer) {
  weft::event_loop loop;
  int ran = 0;
  bool timer_fired = false;
  loop.queue_macrotask([&] { ++ran; });
  loop.queue_macrotask([&] { ++ran; });
  loop.set_timeout(10s, [&] { timer_fired = true; });
  const auto start = steady::now();
  loop.run_until_stalled();
  EXPECT_LT(steady::now() - start, 1s);
  EXPECT_EQ(ran, 2);
  EXPECT_FALSE(timer_fired);
  EXPECT_EQ(loop.armed_timers(), 1u);
}

TEST(event_loop_stalled, run_until_stalled_does_not_block_on_a_task_waiting_for_a_wake) {
  weft::event_loop loop;
  gate g;
  auto h = loop.spawn([&]() -> weft::task<void> { co_await gate_leaf{&g}; });
  const auto start = steady::now();
  loop.run_until_stalled();
  EXPECT_LT(steady::now() - start, 1s);
  EXPECT_EQ(g.polls, 1);
  EXPECT_FALSE(h.is_finished());
  g.open = true;
  g.waiter.wake();
  loop.run_until_stalled();
  EXPECT_TRUE(h.is_finished());
}

TEST(event_loop_stalled, run_until_stalled_fires_timers_whose_deadline_has_passed) {
  weft::event_loop loop;
  bool fired = false;
  loop.set_timeout(1ms, [&] { fired = true; });
  std::this_thread::sleep_for(3ms);
  loop.run_until_stalled();
  EXPECT_TRUE(fired);
}

TEST(event_loop_stalled, run_ready_tasks_runs_queued_work_but_fires_no_timer) {
  weft::event_loop loop;
  int ran = 0;
  bool fired = false;
  loop.set_timeout(1ms, [&] { fired = true; });
  loop.queue_macrotask([&] { ++ran; });
  loop.queue_microtask([&] { ++ran; });
  ASSERT_TRUE(loop.handle().queue_macrotask([&] { ++ran; }));
  std::this_thread::sleep_for(3ms);  // the timer is due, but run_ready_tasks must not poll it
  loop.run_ready_tasks();
  EXPECT_EQ(ran, 3);
  EXPECT_FALSE(fired);
  EXPECT_EQ(loop.armed_timers(), 1u);
  loop.run_until_stalled();
  EXPECT_TRUE(fired);
}

TEST(event_loop_stalled, run_ready_tasks_does_not_block_and_does_not_resume_a_due_sleep) {
  weft::event_loop loop;
  bool woke = false;
  auto h = loop.spawn([&]() -> weft::task<void> {
    co_await weft::sleep(1ms);
    woke = true;
  });
  loop.run_ready_tasks();
  std::this_thread::sleep_for(3ms);
  const auto start = steady::now();
  loop.run_ready_tasks();
  EXPECT_LT(steady::now() - start, 1s);
  EXPECT_FALSE(woke);
  loop.run();
  EXPECT_TRUE(woke);
}

// ---- re-entry ------------------------------------------------------------------------------------------

TEST(event_loop_reentry, run_inside_a_task_completes_that_task_as_panicked_with_usage_error) {
  weft::event_loop loop;
  auto h = loop.spawn([&]() -> weft::task<void> {
    loop.run();
    co_return;
  });
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_THROW(std::rethrow_exception(r.error().exception()), weft::usage_error);
}

TEST(event_loop_reentry, every_driving_call_inside_a_task_is_refused) {
  weft::event_loop loop;
  int refused = 0;
  auto h = loop.spawn([&]() -> weft::task<void> {
    try {
      loop.run_until_stalled();
    } catch (const weft::usage_error&) {
      ++refused;
    }
    try {
      loop.run_ready_tasks();
    } catch (const weft::usage_error&) {
      ++refused;
    }
    try {
      (void)loop.block_on([]() -> weft::task<int> { co_return 1; }());
    } catch (const weft::usage_error&) {
      ++refused;
    }
    co_return;
  });
  loop.run();
  EXPECT_EQ(refused, 3);
  EXPECT_TRUE(h.join().has_value());
  EXPECT_EQ(loop.live_tasks(), 0u);  // the refused block_on did not leave a task behind
}

TEST(event_loop_reentry, a_drive_from_inside_a_callback_is_reported_as_a_panicked_callback) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  bool after = false;
  loop.queue_macrotask([&] { loop.run(); });
  loop.queue_macrotask([&] { after = true; });
  loop.run();
  EXPECT_TRUE(after);
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 1u);
  EXPECT_THROW(std::rethrow_exception(panics[0].exception), weft::usage_error);
}
