// starvation_test.cpp — a checkpoint that runs more than 1,000 microtasks while a macrotask waits
// reports `microtask_starvation` (once per checkpoint); without a waiting macrotask it does not.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <thread>

#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::recording_sink;

namespace {
// Queues a chain of `n` microtasks, each queueing the next (one checkpoint runs them all).
void queue_chain(weft::event_loop& loop, int n, int* ran) {
  auto link = std::make_shared<std::function<void(int)>>();
  *link = [&loop, ran, link_weak = std::weak_ptr<std::function<void(int)>>(link)](int left) {
    ++*ran;
    if (left > 1) {
      auto next = link_weak.lock();
      loop.queue_microtask([next, left] { (*next)(left - 1); });
    }
  };
  loop.queue_microtask([link, n] { (*link)(n); });
}
}  // namespace

TEST(starvation, more_than_a_thousand_microtasks_while_a_macrotask_waits_warn_once) {
  static_assert(weft::event_loop::starvation_checkpoint_threshold == 1'000);
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  int ran = 0;
  bool macro_ran = false;
  loop.queue_macrotask([&] { macro_ran = true; });
  queue_chain(loop, 5'000, &ran);
  loop.run();
  EXPECT_EQ(ran, 5'000);
  EXPECT_TRUE(macro_ran);
  const auto warnings = sink->events_of(weft::telemetry_kind::microtask_starvation);
  ASSERT_EQ(warnings.size(), 1u);  // once per checkpoint, not once per microtask
  EXPECT_GT(warnings[0].count, 1'000u);
}

TEST(starvation, exactly_the_threshold_does_not_warn_and_one_more_does) {
  {
    auto sink = std::make_shared<recording_sink>();
    weft::event_loop loop(weft_test::with_sink(sink));
    int ran = 0;
    loop.queue_macrotask([] {});
    queue_chain(loop, 1'000, &ran);
    loop.run();
    EXPECT_EQ(ran, 1'000);
    EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 0u);
  }
  {
    auto sink = std::make_shared<recording_sink>();
    weft::event_loop loop(weft_test::with_sink(sink));
    int ran = 0;
    loop.queue_macrotask([] {});
    queue_chain(loop, 1'001, &ran);
    loop.run();
    EXPECT_EQ(ran, 1'001);
    EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 1u);
  }
}

TEST(starvation, a_long_checkpoint_with_no_waiting_macrotask_does_not_warn) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  int ran = 0;
  queue_chain(loop, 5'000, &ran);
  loop.run();
  EXPECT_EQ(ran, 5'000);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 0u);
}

TEST(starvation, a_waiting_remote_macrotask_counts_as_waiting) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  auto handle = loop.handle();
  int ran = 0;
  bool remote_ran = false;
  // The first link has another thread queue a macrotask (and waits for the acceptance); the
  // rest of the chain then runs while that macrotask waits in the inbox.
  std::thread producer;
  loop.queue_microtask([&] {
    producer = std::thread([&] { ASSERT_TRUE(handle.queue_macrotask([&] { remote_ran = true; })); });
    producer.join();
  });
  queue_chain(loop, 2'000, &ran);
  loop.run();
  EXPECT_TRUE(remote_ran);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 1u);
}

TEST(starvation, a_due_timer_counts_as_waiting) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  int ran = 0;
  bool fired = false;
  loop.set_timeout(1ms, [&] { fired = true; });
  loop.queue_microtask([] { std::this_thread::sleep_for(3ms); });  // let the timer become due
  queue_chain(loop, 2'000, &ran);
  loop.run();
  EXPECT_TRUE(fired);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 1u);
}

TEST(starvation, each_starving_checkpoint_warns_again) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  int ran = 0;
  // Two macrotasks, each starting a long chain while the other (or a third) waits.
  loop.queue_macrotask([&] { queue_chain(loop, 1'500, &ran); });
  loop.queue_macrotask([&] { queue_chain(loop, 1'500, &ran); });
  loop.queue_macrotask([] {});
  loop.run();
  EXPECT_EQ(ran, 3'000);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::microtask_starvation), 2u);
}

TEST(starvation, a_macrotask_that_starts_waiting_late_is_reported_within_the_recheck_interval) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  constexpr int late = 1'500;  // links that run before the macrotask is queued
  int ran = 0;
  bool macro_ran = false;
  auto link = std::make_shared<std::function<void(int)>>();
  *link = [&, link_weak = std::weak_ptr<std::function<void(int)>>(link)](int left) {
    if (++ran == late) loop.queue_macrotask([&] { macro_ran = true; });
    if (left > 1) {
      auto next = link_weak.lock();
      loop.queue_microtask([next, left] { (*next)(left - 1); });
    }
  };
  loop.queue_microtask([link] { (*link)(3'000); });
  loop.run();
  EXPECT_EQ(ran, 3'000);
  EXPECT_TRUE(macro_ran);
  const auto warnings = sink->events_of(weft::telemetry_kind::microtask_starvation);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_GT(warnings[0].count, static_cast<std::uint64_t>(late));
  EXPECT_LE(warnings[0].count, late + weft::event_loop::starvation_recheck_interval);
}
