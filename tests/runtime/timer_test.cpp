// timer_test.cpp — sleep, sleep_until, timeout (both outcomes; the timed-out task is aborted),
// interval, set_timeout / set_interval / clear_timer. No timer fires before its deadline; a
// cancelled timer lets go of its entry and its task at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <weft/platform/clock.hpp>
#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::drop_probe;
using weft_test::drop_record;
using weft_test::recording_sink;

namespace {
weft::instant now() { return weft::platform::clock::now(); }
using steady = std::chrono::steady_clock;

// A waker kind that counts its live references (clones made minus drops), so a test can see
// whether anything still holds one. Owner thread only.
struct counted_waker_target {
  int live = 0;
};
weft::raw_waker counted_clone(void* data) noexcept;
void counted_wake_by_ref(void*) noexcept {}
void counted_drop(void* data) noexcept { --static_cast<counted_waker_target*>(data)->live; }
constexpr weft::waker_vtable counted_vtable{&counted_clone, &counted_wake_by_ref, &counted_drop, nullptr};
weft::raw_waker counted_clone(void* data) noexcept {
  ++static_cast<counted_waker_target*>(data)->live;
  return weft::raw_waker{&counted_vtable, data};
}
weft::waker counted_waker(counted_waker_target& target) { return weft::waker(counted_clone(&target)); }

// A sleep polled with a counted waker instead of its task's own, so the count shows who holds it.
struct counted_sleep {
  weft::sleep_leaf inner;
  counted_waker_target* target;
  bool poll_ready(const weft::waker&) { return inner.poll_ready(counted_waker(*target)); }
  void await_resume() const noexcept {}
};
}  // namespace

// ---- sleep ---------------------------------------------------------------------------------------

TEST(timer_sleep, sleep_never_resumes_before_its_deadline) {
  weft::event_loop loop;
  std::vector<std::pair<weft::instant, weft::instant>> deadline_and_wake;  // per sleeper
  std::vector<weft::join_handle<void>> handles;
  for (auto d : {0ms, 1ms, 2ms, 3ms, 5ms, 8ms, 13ms}) {
    handles.push_back(loop.spawn([&deadline_and_wake, d]() -> weft::task<void> {
      const weft::instant deadline = now() + d;
      co_await weft::sleep(d);
      deadline_and_wake.emplace_back(deadline, now());
    }));
  }
  loop.run();
  ASSERT_EQ(deadline_and_wake.size(), 7u);
  for (const auto& [deadline, woke] : deadline_and_wake) EXPECT_GE(woke, deadline);
}

TEST(timer_sleep, sleep_until_resumes_at_or_after_the_given_instant) {
  weft::event_loop loop;
  const weft::instant deadline = now() + 7ms;
  weft::instant woke{};
  loop.block_on([&]() -> weft::task<void> {
    co_await weft::sleep_until(deadline);
    woke = now();
  }());
  EXPECT_GE(woke, deadline);
}

TEST(timer_sleep, a_sleep_whose_deadline_has_passed_completes_without_arming_a_timer) {
  weft::event_loop loop;
  std::size_t armed_while_sleeping = 99;
  loop.block_on([&]() -> weft::task<void> {
    co_await weft::sleep_until(now() - 1s);
    co_await weft::sleep(0ms);
    armed_while_sleeping = loop.armed_timers();
  }());
  EXPECT_EQ(armed_while_sleeping, 0u);
}

TEST(timer_sleep, sleep_accepts_any_duration_unit_and_rounds_up) {
  weft::event_loop loop;
  const weft::instant start = now();
  loop.block_on([]() -> weft::task<void> {
    co_await weft::sleep(std::chrono::duration<double, std::milli>(2.5));
    co_await weft::sleep(std::chrono::microseconds(500));
  }());
  EXPECT_GE(now() - start, 3ms);
}

TEST(timer_sleep, sleepers_wake_in_deadline_order) {
  weft::event_loop loop;
  std::vector<int> order;
  std::vector<weft::join_handle<void>> handles;
  for (int ms : {12, 3, 8, 1}) {
    handles.push_back(loop.spawn([&order, ms]() -> weft::task<void> {
      co_await weft::sleep(std::chrono::milliseconds(ms));
      order.push_back(ms);
    }));
  }
  loop.run();
  EXPECT_EQ(order, (std::vector<int>{1, 3, 8, 12}));
}

TEST(timer_sleep, an_aborted_sleeper_disarms_its_timer) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<void> { co_await weft::sleep(10s); });
  loop.run_until_stalled();
  EXPECT_EQ(loop.armed_timers(), 1u);
  h.abort();
  const auto start = steady::now();
  loop.run();
  EXPECT_LT(steady::now() - start, 5s);
  EXPECT_EQ(loop.armed_timers(), 0u);
}

// ---- timeout -------------------------------------------------------------------------------------

TEST(timer_timeout, a_task_that_finishes_first_gives_its_value) {
  weft::event_loop loop;
  auto r = loop.block_on([]() -> weft::task<weft::expected<int, weft::timeout_error>> {
    co_return co_await weft::timeout(5s, []() -> weft::task<int> {
      co_await weft::sleep(1ms);
      co_return 21;
    }());
  }());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 21);
  EXPECT_EQ(loop.armed_timers(), 0u);  // the timeout's own timer went with the leaf
}

TEST(timer_timeout, an_elapsed_timeout_reports_elapsed_no_earlier_than_its_deadline_and_aborts_the_task) {
  weft::event_loop loop;
  drop_record inner_local;
  bool inner_finished = false;
  weft::instant deadline{};
  weft::instant reported{};
  auto r = loop.block_on([&]() -> weft::task<weft::expected<int, weft::timeout_error>> {
    deadline = now() + 5ms;
    auto out = co_await weft::timeout_at(deadline, [](drop_record* rec, bool* finished) -> weft::task<int> {
      drop_probe local(rec);
      co_await weft::sleep(30ms);
      *finished = true;
      co_return 1;
    }(&inner_local, &inner_finished));
    reported = now();
    co_return out;
  }());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::timeout_error::elapsed);
  EXPECT_GE(reported, deadline);
  loop.run();  // past the inner task's own sleep: it must not continue
  EXPECT_FALSE(inner_finished);
  EXPECT_EQ(inner_local.drops.load(), 1);
  EXPECT_EQ(inner_local.last_thread.load(), weft_test::thread_id());
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(timer_timeout, timeout_over_a_leaf_gives_either_outcome) {
  weft::event_loop loop;
  auto quick = loop.block_on([]() -> weft::task<bool> {
    auto r = co_await weft::timeout(1s, weft::sleep(1ms));
    co_return r.has_value();
  }());
  EXPECT_TRUE(quick);
  auto slow = loop.block_on([]() -> weft::task<bool> {
    auto r = co_await weft::timeout(1ms, weft::sleep(10s));
    co_return r.has_value();
  }());
  EXPECT_FALSE(slow);
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(timer_timeout, timeout_over_a_void_task_gives_an_empty_success) {
  weft::event_loop loop;
  bool ran = false;
  const bool ok = loop.block_on([&]() -> weft::task<bool> {
    auto r = co_await weft::timeout(1s, [](bool* flag) -> weft::task<void> {
      *flag = true;
      co_return;
    }(&ran));
    co_return r.has_value();
  }());
  EXPECT_TRUE(ok);
  EXPECT_TRUE(ran);
}

TEST(timer_timeout, a_panic_of_the_inner_task_surfaces_at_the_co_await) {
  weft::event_loop loop;
  const std::string what = loop.block_on([]() -> weft::task<std::string> {
    try {
      (void)co_await weft::timeout(1s, []() -> weft::task<int> {
        throw std::runtime_error("inner broke");
        co_return 0;
      }());
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "";
  }());
  EXPECT_EQ(what, "inner broke");
}

// ---- interval ------------------------------------------------------------------------------------

TEST(timer_interval, the_first_tick_is_immediate_and_later_ticks_keep_the_schedule) {
  weft::event_loop loop;
  const auto period = 4ms;
  std::vector<weft::instant> ticks;
  weft::instant first_scheduled{};
  loop.block_on([&]() -> weft::task<void> {
    first_scheduled = now();
    weft::interval every(period);
    EXPECT_EQ(every.period(), std::chrono::duration_cast<weft::duration>(period));
    for (int i = 0; i < 5; ++i) {
      co_await every.tick();
      ticks.push_back(now());
    }
  }());
  ASSERT_EQ(ticks.size(), 5u);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    EXPECT_GE(ticks[i], first_scheduled + static_cast<int>(i) * period) << "tick " << i << " was early";
  }
  EXPECT_LT(ticks[0] - first_scheduled, 1s);  // the first tick did not wait a period
}

TEST(timer_interval, missed_ticks_complete_at_once_until_caught_up) {
  weft::event_loop loop;
  const auto period = 2ms;
  int immediate_ticks = 0;
  loop.block_on([&]() -> weft::task<void> {
    weft::interval every(period);
    co_await every.tick();               // immediate
    std::this_thread::sleep_for(11ms);   // miss ~5 ticks (blocking on purpose)
    const auto before = now();
    for (int i = 0; i < 4; ++i) {
      co_await every.tick();
      if (now() - before < 1ms) ++immediate_ticks;
    }
  }());
  EXPECT_GE(immediate_ticks, 3);
}

// ---- set_timeout / set_interval / clear_timer ------------------------------------------------------

TEST(timer_callbacks, set_timeout_fires_once_and_never_before_its_deadline) {
  weft::event_loop loop;
  std::vector<weft::instant> fired;
  const weft::instant armed_at = now();
  const auto id = loop.set_timeout(6ms, [&] { fired.push_back(now()); });
  EXPECT_NE(id.value, 0u);
  EXPECT_EQ(loop.armed_timers(), 1u);
  loop.run();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_GE(fired[0], armed_at + 6ms);
  EXPECT_EQ(loop.armed_timers(), 0u);
  EXPECT_FALSE(loop.clear_timer(id));  // already fired
}

TEST(timer_callbacks, timers_fire_in_deadline_order_and_ties_in_arming_order) {
  weft::event_loop loop;
  std::vector<std::string> order;
  loop.set_timeout(9ms, [&] { order.push_back("9"); });
  loop.set_timeout(3ms, [&] { order.push_back("3a"); });
  loop.set_timeout(6ms, [&] { order.push_back("6"); });
  loop.set_timeout(3ms, [&] { order.push_back("3b"); });
  loop.set_timeout(3ms, [&] { order.push_back("3c"); });
  loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"3a", "3b", "3c", "6", "9"}));
}

TEST(timer_callbacks, clear_timer_before_the_deadline_stops_it_and_lets_run_return) {
  weft::event_loop loop;
  bool fired = false;
  const auto id = loop.set_timeout(10s, [&] { fired = true; });
  EXPECT_TRUE(loop.clear_timer(id));
  EXPECT_FALSE(loop.clear_timer(id));  // second time: nothing pending
  EXPECT_EQ(loop.armed_timers(), 0u);
  const auto start = steady::now();
  loop.run();
  EXPECT_LT(steady::now() - start, 5s);
  EXPECT_FALSE(fired);
}

TEST(timer_callbacks, a_timer_cleared_after_expiry_but_before_its_macrotask_ran_does_not_fire) {
  weft::event_loop loop;
  std::vector<std::string> log;
  weft::timer_id second{};
  // Both expire in the same turn; the first one's callback clears the second while it is queued.
  loop.set_timeout(2ms, [&] {
    log.push_back("first");
    EXPECT_TRUE(loop.clear_timer(second));
  });
  second = loop.set_timeout(2ms, [&] { log.push_back("second"); });
  loop.run();
  EXPECT_EQ(log, std::vector<std::string>{"first"});
}

TEST(timer_callbacks, set_interval_repeats_on_schedule_until_cleared_from_its_own_callback) {
  weft::event_loop loop;
  std::vector<weft::instant> fired;
  const weft::instant start = now();
  weft::timer_id id{};
  id = loop.set_interval(3ms, [&] {
    fired.push_back(now());
    if (fired.size() == 4) {
      EXPECT_TRUE(loop.clear_timer(id));
    }
  });
  loop.run();  // returns once the interval is cleared
  ASSERT_EQ(fired.size(), 4u);
  for (std::size_t i = 0; i < fired.size(); ++i) {
    EXPECT_GE(fired[i], start + static_cast<int>(i + 1) * 3ms) << "firing " << i << " was early";
  }
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(timer_callbacks, set_interval_with_a_non_positive_period_throws_usage_error) {
  weft::event_loop loop;
  EXPECT_THROW((void)loop.set_interval(0ms, [] {}), weft::usage_error);
  EXPECT_THROW((void)loop.set_interval(-1ms, [] {}), weft::usage_error);
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(timer_callbacks, an_interval_cleared_from_outside_stops_ticking) {
  weft::event_loop loop;
  int ticks = 0;
  const auto id = loop.set_interval(1ms, [&] { ++ticks; });
  loop.set_timeout(10ms, [&] { EXPECT_TRUE(loop.clear_timer(id)); });
  loop.run();
  const int at_clear = ticks;
  EXPECT_GE(at_clear, 1);
  loop.set_timeout(5ms, [] {});
  loop.run();
  EXPECT_EQ(ticks, at_clear);
}

TEST(timer_callbacks, an_interval_whose_callback_throws_keeps_ticking) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink));
  int ticks = 0;
  weft::timer_id id{};
  id = loop.set_interval(1ms, [&] {
    if (++ticks == 3) {
      EXPECT_TRUE(loop.clear_timer(id));
    }
    throw std::runtime_error("tick failed");
  });
  loop.run();
  EXPECT_EQ(ticks, 3);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::callback_panicked), 3u);
}

TEST(timer_callbacks, a_timer_callback_may_arm_another_timer) {
  weft::event_loop loop;
  std::vector<weft::instant> fired;
  const weft::instant start = now();
  loop.set_timeout(2ms, [&] {
    fired.push_back(now());
    loop.set_timeout(2ms, [&] { fired.push_back(now()); });
  });
  loop.run();
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_GE(fired[0], start + 2ms);
  EXPECT_GE(fired[1], fired[0] + 2ms);
}

// ---- cancellation frees at once ------------------------------------------------------------------

namespace {
// Rounds of the sequential-timeout test: a heap that kept cancelled entries would end up holding
// one per round. Unoptimised and sanitizer builds run a tenth of them (each round costs them
// roughly ten times as much); the bounds checked are the same.
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int sequential_timeout_rounds = 100'000;
#else
constexpr int sequential_timeout_rounds = 1'000'000;
#endif
// While a round's inner task runs: the outer task and the inner one are live, and the heap holds
// the pending early timer and the outer task's one timeout timer.
constexpr std::size_t live_tasks_max = 2;
constexpr std::size_t timer_heap_entries_max = 2;

// A ready operation that notes, while it runs, the most entries and live tasks the loop had.
weft::task<int> note_loop_sizes(weft::event_loop* loop, std::size_t* entries_max, std::size_t* live_max) {
  *entries_max = std::max(*entries_max, loop->timer_heap_entries());
  *live_max = std::max(*live_max, loop->live_tasks());
  co_return 1;
}
}  // namespace

TEST(timer_cancellation, sequential_hour_long_timeouts_over_ready_tasks_keep_the_heap_and_task_count_bounded) {
  weft::event_loop loop;
  std::size_t entries_max = 0;
  std::size_t live_max = 0;
  // Pending and earlier than every timeout, it stays at the top of the heap: so the bounds also
  // catch a heap that drops cancelled entries only when they reach the top.
  const weft::timer_id early = loop.set_timeout(30min, [] {});
  const int completed = loop.block_on([&]() -> weft::task<int> {
    int sum = 0;
    for (int i = 0; i < sequential_timeout_rounds; ++i) {
      auto r = co_await weft::timeout(1h, note_loop_sizes(&loop, &entries_max, &live_max));
      if (r) sum += *r;
    }
    co_return sum;
  }());
  EXPECT_EQ(completed, sequential_timeout_rounds);
  EXPECT_LE(entries_max, timer_heap_entries_max);
  EXPECT_LE(live_max, live_tasks_max);
  EXPECT_EQ(loop.timer_heap_entries(), 1u);
  EXPECT_TRUE(loop.clear_timer(early));
  EXPECT_EQ(loop.timer_heap_entries(), 0u);
  EXPECT_EQ(loop.armed_timers(), 0u);
  EXPECT_EQ(loop.live_tasks(), 0u);
}

TEST(timer_cancellation, cleared_timers_leave_the_heap_at_once_and_the_rest_fire_in_deadline_order) {
  weft::event_loop loop;
  std::vector<std::string> order;
  auto arm = [&](std::chrono::milliseconds delay, std::string name) {
    return loop.set_timeout(delay, [&order, name] { order.push_back(name); });
  };
  // Armed out of deadline order, with a three-way tie at 3 ms (fired in arming order).
  const weft::timer_id doomed_5 = arm(5ms, "5");
  const weft::timer_id doomed_interval = loop.set_interval(4ms, [&order] { order.push_back("interval"); });
  arm(1ms, "1");
  arm(9ms, "9");
  arm(3ms, "3a");
  const weft::timer_id doomed_7 = arm(7ms, "7");
  const weft::timer_id doomed_3b = arm(3ms, "3b");
  arm(2ms, "2");
  arm(8ms, "8");
  arm(3ms, "3c");
  arm(6ms, "6");
  EXPECT_EQ(loop.timer_heap_entries(), 11u);
  // Neither the earliest deadline nor the last armed: each of these sits inside the heap.
  for (weft::timer_id id : {doomed_5, doomed_interval, doomed_7, doomed_3b}) {
    const std::size_t before = loop.timer_heap_entries();
    EXPECT_TRUE(loop.clear_timer(id));
    EXPECT_EQ(loop.timer_heap_entries(), before - 1);
  }
  EXPECT_EQ(loop.armed_timers(), 7u);
  loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"1", "2", "3a", "3c", "6", "8", "9"}));
  EXPECT_EQ(loop.timer_heap_entries(), 0u);
}

TEST(timer_cancellation, an_aborted_sleepers_cell_is_freed_before_its_deadline) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<void> { co_await weft::sleep(1h); });
  loop.run_until_stalled();
  ASSERT_EQ(loop.timer_heap_entries(), 1u);
  // A joiner's waker lives in the task's cell until the cell is freed: it shows when that happens.
  counted_waker_target joiner;
  EXPECT_FALSE(h.poll_ready(counted_waker(joiner)));
  EXPECT_EQ(joiner.live, 1);
  h.abort();
  loop.run_until_stalled();
  EXPECT_TRUE(h.is_finished());
  EXPECT_EQ(loop.timer_heap_entries(), 0u);
  h.detach();  // the handle's reference; the sleep's timer must hold none
  EXPECT_EQ(joiner.live, 0);
}

TEST(timer_cancellation, a_task_that_finished_before_its_timeout_is_freed_at_once) {
  weft::event_loop loop;
  auto h = loop.spawn([]() -> weft::task<int> {
    auto r = co_await weft::timeout(1h, []() -> weft::task<int> { co_return 5; }());
    co_return r ? *r : -1;
  }());
  counted_waker_target joiner;  // as above: freed with the cell
  EXPECT_FALSE(h.poll_ready(counted_waker(joiner)));
  loop.run();  // returns at once: the cancelled timeout keeps nothing armed
  EXPECT_TRUE(h.is_finished());
  EXPECT_EQ(joiner.live, 1);
  h.detach();
  EXPECT_EQ(joiner.live, 0);
}

TEST(timer_cancellation, a_cancelled_sleep_drops_the_waker_it_kept) {
  weft::event_loop loop;
  counted_waker_target target;
  auto h = loop.spawn([](counted_waker_target* t) -> weft::task<void> {
    co_await counted_sleep{weft::sleep(1h), t};
  }(&target));
  loop.run_until_stalled();
  EXPECT_EQ(target.live, 1);  // the armed timer's copy
  h.abort();
  loop.run_until_stalled();
  EXPECT_TRUE(h.is_finished());
  EXPECT_EQ(target.live, 0);
}

TEST(timer_cancellation, shutdown_drops_every_timer_and_what_it_holds) {
  weft::event_loop loop;
  counted_waker_target target;
  drop_record callback_state;
  auto h = loop.spawn([](counted_waker_target* t) -> weft::task<void> {
    co_await counted_sleep{weft::sleep(1h), t};
  }(&target));
  loop.set_interval(1h, [probe = std::make_shared<drop_probe>(&callback_state)] {});
  loop.run_until_stalled();
  EXPECT_EQ(loop.timer_heap_entries(), 2u);
  (void)loop.shutdown();
  EXPECT_EQ(loop.timer_heap_entries(), 0u);
  EXPECT_EQ(target.live, 0);
  EXPECT_EQ(callback_state.drops.load(), 1);
}

namespace {

// Durations at the edge of the clock's range: a deadline past it saturates ("never"), so such a
// sleep or timeout does not wrap into the past and fire at once (nor overflow, which the UBSan
// build would report); a negative one is due at once.
TEST(timer_limits, a_sleep_longer_than_the_clock_holds_never_ends) {
  weft::event_loop loop;
  bool forever_ended = false;
  bool hours_ended = false;
  auto forever = loop.spawn([&]() -> weft::task<void> {
    co_await weft::sleep(weft::duration::max());
    forever_ended = true;
  });
  auto hours = loop.spawn([&]() -> weft::task<void> {
    co_await weft::sleep(std::chrono::hours::max());
    hours_ended = true;
  });
  loop.block_on([]() -> weft::task<void> { co_await weft::sleep(5ms); }());
  EXPECT_FALSE(forever_ended);
  EXPECT_FALSE(hours_ended);
  EXPECT_EQ(loop.armed_timers(), 2u);
  forever.abort();
  hours.abort();
  loop.run_until_stalled();
  EXPECT_EQ(loop.armed_timers(), 0u);
}

TEST(timer_limits, a_timeout_longer_than_the_clock_holds_lets_the_operation_finish) {
  weft::event_loop loop;
  for (const weft::duration limit : {weft::duration::max(), weft::duration::max() - 1ns}) {
    auto r = loop.block_on([limit]() -> weft::task<weft::expected<int, weft::timeout_error>> {
      co_return co_await weft::timeout(limit, []() -> weft::task<int> {
        co_await weft::sleep(2ms);
        co_return 7;
      }());
    }());
    ASSERT_TRUE(r) << "timed out at once";
    EXPECT_EQ(*r, 7);
  }
  auto in_days = loop.block_on([]() -> weft::task<weft::expected<int, weft::timeout_error>> {
    co_return co_await weft::timeout(std::chrono::duration<double, std::ratio<86400>>(1e300),
                                     []() -> weft::task<int> { co_return 8; }());
  }());
  ASSERT_TRUE(in_days);
  EXPECT_EQ(*in_days, 8);
}

TEST(timer_limits, a_negative_sleep_ends_at_once_and_an_interval_needs_a_positive_period) {
  weft::event_loop loop;
  loop.block_on([]() -> weft::task<void> {
    co_await weft::sleep(weft::duration::min());
    co_await weft::sleep(-1h);
  }());
  EXPECT_THROW(weft::interval(0ms), weft::usage_error);
  EXPECT_THROW(weft::interval(-1ms), weft::usage_error);
  // A period past the clock's range: the first tick at once, the next never.
  weft::interval slow(std::chrono::hours::max());
  EXPECT_EQ(slow.period(), weft::duration::max());
  bool second = false;
  auto ticker = loop.spawn([&]() -> weft::task<void> {
    co_await slow.tick();
    co_await slow.tick();
    second = true;
  });
  loop.block_on([]() -> weft::task<void> { co_await weft::sleep(5ms); }());
  EXPECT_FALSE(second);
  ticker.abort();
  loop.run_until_stalled();
}

TEST(timer_limits, a_timeout_callback_longer_than_the_clock_holds_stays_armed) {
  weft::event_loop loop;
  bool fired = false;
  const weft::timer_id id = loop.set_timeout(weft::duration::max(), [&] { fired = true; });
  loop.block_on([]() -> weft::task<void> { co_await weft::sleep(5ms); }());
  EXPECT_FALSE(fired);
  EXPECT_TRUE(loop.clear_timer(id));
}

}  // namespace

namespace {
// A drain given a deadline past the clock's range waits for the tasks, not for nothing.
TEST(timer_limits, a_drain_deadline_longer_than_the_clock_holds_waits_for_the_tasks) {
  auto rt = weft::runtime::builder().workers(1).build();
  auto h = rt.scheduler().spawn_anywhere([]() -> weft::task<int> {
    co_await weft::sleep(5ms);
    co_return 1;
  });
  EXPECT_EQ(rt.drain(weft::duration::max()), weft::drain_outcome::drained);
  auto pool = weft::stealing_pool::builder().workers(1).build();
  auto p = pool.spawn([]() -> weft::task<int> {
    co_await weft::yield_now();
    co_return 2;
  });
  EXPECT_EQ(pool.drain(weft::duration::max()), weft::drain_outcome::drained);
  EXPECT_EQ(h.join().value(), 1);
  EXPECT_EQ(p.join().value(), 2);
  (void)std::move(rt).stop();
}
}  // namespace
