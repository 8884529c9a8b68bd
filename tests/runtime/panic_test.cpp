// panic_test.cpp — exceptions are panics: a throwing task completes as join_error::panicked with
// the exception; a throwing micro/macrotask or timer callback is caught by the loop's firewall,
// reported to telemetry, and the loop goes on.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::recording_sink;
using weft_test::what_of;

namespace {
struct distinct_error : std::exception {
  const char* what() const noexcept override { return "distinct"; }
};
}  // namespace

// ---- tasks -----------------------------------------------------------------------------------------

TEST(panic_task, a_task_that_throws_completes_as_panicked_carrying_the_exception) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> {
    throw std::invalid_argument("bad argument");
    co_return 0;
  });
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::join_error::panicked);
  EXPECT_TRUE(r.error().is_panicked());
  ASSERT_TRUE(r.error().exception());
  EXPECT_THROW(std::rethrow_exception(r.error().exception()), std::invalid_argument);
  EXPECT_EQ(what_of(r.error().exception()), "bad argument");
}

TEST(panic_task, a_task_that_throws_after_suspending_completes_as_panicked) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<void> {
    co_await weft::sleep(1ms);
    throw distinct_error();
  });
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_THROW(std::rethrow_exception(r.error().exception()), distinct_error);
}

TEST(panic_task, rethrow_of_a_panicked_error_throws_the_original_exception) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<void> {
    throw std::out_of_range("index 9");
    co_return;
  });
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_THROW(r.error().rethrow(), std::out_of_range);
}

TEST(panic_task, rethrow_of_a_cancelled_error_throws_task_failed_naming_the_kind) {
  const weft::join_error cancelled(weft::join_error::cancelled);
  try {
    cancelled.rethrow();
    ADD_FAILURE() << "rethrow returned";
  } catch (const weft::task_failed& e) {
    EXPECT_TRUE(e.error().is_cancelled());
    EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos);
  }
  EXPECT_STREQ(weft::to_string(weft::join_error::panicked), "panicked");
  EXPECT_STREQ(weft::to_string(weft::join_error::rejected), "rejected");
}

TEST(panic_task, a_panic_does_not_disturb_other_tasks_on_the_loop) {
  weft::event_loop loop;
  auto bad = loop.spawn([]() -> weft::task<int> {
    co_await weft::yield_now();
    throw std::runtime_error("one task fails");
  });
  auto good = loop.spawn([]() -> weft::task<int> {
    co_await weft::sleep(2ms);
    co_return 5;
  });
  loop.run();
  EXPECT_TRUE(bad.join().error().is_panicked());
  EXPECT_EQ(good.join().value(), 5);
}

TEST(panic_task, a_joiner_task_sees_the_panic_as_a_value_not_an_exception) {
  weft::event_loop loop;
  const std::string seen = loop.block_on([]() -> weft::task<std::string> {
    auto h = weft::spawn([]() -> weft::task<int> {
      throw std::runtime_error("child failed");
      co_return 0;
    }());
    auto r = co_await h;
    if (r.has_value()) co_return "value";
    co_return std::string(weft::to_string(r.error().get_kind())) + ": " + what_of(r.error().exception());
  }());
  EXPECT_EQ(seen, "panicked: child failed");
}

TEST(panic_task, a_panicking_task_is_not_reported_as_a_callback_panic) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  auto h = loop.spawn([]() -> weft::task<void> {
    throw std::runtime_error("task panic");
    co_return;
  });
  loop.run();
  EXPECT_TRUE(h.join().error().is_panicked());
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::callback_panicked), 0u);  // it went to the joiner
}

// ---- callbacks -------------------------------------------------------------------------------------

TEST(panic_callback, a_throwing_microtask_is_reported_and_the_loop_goes_on) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  std::vector<std::string> log;
  loop.queue_microtask([] { throw std::runtime_error("micro boom"); });
  loop.queue_microtask([&] { log.push_back("next micro"); });
  loop.queue_macrotask([&] { log.push_back("macro"); });
  loop.run();
  EXPECT_EQ(log, (std::vector<std::string>{"next micro", "macro"}));
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 1u);
  EXPECT_EQ(what_of(panics[0].exception), "micro boom");
  EXPECT_EQ(panics[0].count, 1u);
}

TEST(panic_callback, a_throwing_macrotask_is_reported_and_the_loop_goes_on) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  std::vector<std::string> log;
  loop.queue_macrotask([] { throw distinct_error(); });
  loop.queue_macrotask([&] { log.push_back("after"); });
  loop.run();
  EXPECT_EQ(log, std::vector<std::string>{"after"});
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 1u);
  EXPECT_THROW(std::rethrow_exception(panics[0].exception), distinct_error);
}

TEST(panic_callback, a_throwing_remote_macrotask_is_reported_and_the_loop_goes_on) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  auto handle = loop.handle();
  int ran = 0;
  std::thread producer([&] {
    ASSERT_TRUE(handle.queue_macrotask([] { throw std::runtime_error("remote boom"); }));
    ASSERT_TRUE(handle.queue_macrotask([&] { ++ran; }));
  });
  producer.join();
  loop.run();
  EXPECT_EQ(ran, 1);
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 1u);
  EXPECT_EQ(what_of(panics[0].exception), "remote boom");
}

TEST(panic_callback, a_throwing_timer_callback_is_reported_and_later_timers_still_fire) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  bool later_fired = false;
  loop.set_timeout(1ms, [] { throw std::runtime_error("timer boom"); });
  loop.set_timeout(3ms, [&] { later_fired = true; });
  loop.run();
  EXPECT_TRUE(later_fired);
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 1u);
  EXPECT_EQ(what_of(panics[0].exception), "timer boom");
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(panic_callback, a_throwing_callback_with_the_default_sink_is_dropped_quietly) {
  weft::event_loop loop;  // no sink configured: the no-op sink
  int after = 0;
  loop.queue_microtask([] { throw 42; });  // not even a std::exception
  loop.queue_macrotask([] { throw std::runtime_error("x"); });
  loop.queue_macrotask([&] { ++after; });
  loop.run();
  EXPECT_EQ(after, 1);
}

TEST(panic_callback, many_panics_are_each_reported) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  for (int i = 0; i < 25; ++i) {
    loop.queue_macrotask([i] { throw std::runtime_error("macro " + std::to_string(i)); });
  }
  loop.run();
  const auto panics = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(panics.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(what_of(panics[static_cast<std::size_t>(i)].exception), "macro " + std::to_string(i));
}
