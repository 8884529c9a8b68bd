// tests/runtime/local_domain_test.cpp — a host-driven event loop: run_n, run_for and its stats,
// the local_spawner (spawn, dispatch, dispatch_future) from other threads, host-thread affinity,
// panics, and a spawner that outlives its domain.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using namespace std::chrono_literals;
using weft_test::thread_id;

namespace {
// Drives `d` on this thread until pred() (bounded by a generous limit).
template <class P>
bool drive_until(weft::local_domain& d, P pred) {
  return weft_test::eventually(
      [&] {
        (void)d.run_for(1ms);
        return pred();
      },
      weft_test::generous);
}
}  // namespace

TEST(local_domain, run_n_zero_does_nothing) {
  weft::local_domain d;
  int ran = 0;
  d.loop().queue_macrotask([&] { ++ran; });
  EXPECT_TRUE(d.spawner().dispatch([&] { ++ran; }));
  EXPECT_EQ(d.run_n(0), 0u);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(d.run_n(10), 2u);  // still there
  EXPECT_EQ(ran, 2);
}

TEST(local_domain, run_n_runs_at_most_n_turns) {
  weft::local_domain d;
  int ran = 0;
  for (int i = 0; i < 10; ++i) d.loop().queue_macrotask([&] { ++ran; });  // one macrotask per turn
  EXPECT_EQ(d.run_n(3), 3u);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(d.run_n(100), 7u);  // stops early once nothing is ready
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(d.run_n(5), 0u);
}

TEST(local_domain, run_for_a_zero_budget_does_nothing) {
  weft::local_domain d;
  int ran = 0;
  EXPECT_TRUE(d.spawner().dispatch([&] { ++ran; }));
  const weft::run_stats st = d.run_for(0ms);
  EXPECT_EQ(st.drive_steps, 0u);
  EXPECT_EQ(st.inbox_commands, 0u);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(d.run_n(5), 1u);
  EXPECT_EQ(ran, 1);
}

TEST(local_domain, run_for_stops_when_idle_and_reports_what_it_did) {
  weft::local_domain d;
  auto sp = d.spawner();
  int ran = 0;
  std::thread([&] {
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(sp.dispatch([&] { ++ran; }));
  }).join();
  d.loop().queue_macrotask([&] { ++ran; });
  // Budget far beyond the work: it returns once idle, not when the budget is spent.
  const weft::run_stats st = d.run_for(30s);
  EXPECT_EQ(ran, 6);
  EXPECT_EQ(st.inbox_commands, 5u);
  EXPECT_EQ(st.drive_steps, 6u);  // one macrotask per turn
  EXPECT_GT(st.elapsed, 0ns);
  EXPECT_LT(st.elapsed, 30s);
  const weft::run_stats idle = d.run_for(30s);
  EXPECT_EQ(idle.drive_steps, 0u);
  EXPECT_EQ(idle.inbox_commands, 0u);
}

TEST(local_domain, spawner_copies_spawn_dispatch_and_dispatch_future_from_other_threads) {
  weft::local_domain d;
  const std::uint64_t host = thread_id();
  std::atomic<int> dispatched{0};
  std::atomic<int> futures_done{0};
  std::atomic<int> wrong_thread{0};
  std::atomic<int> joined_sum{0};
  std::atomic<int> senders_done{0};
  constexpr int senders = 3;
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s) {
    threads.emplace_back([&, sp = d.spawner(), s]() mutable {
      weft::local_spawner copy = sp;  // copies keep working
      EXPECT_TRUE(copy.dispatch([&] {
        if (thread_id() != host) wrong_thread.fetch_add(1);
        dispatched.fetch_add(1);
      }));
      EXPECT_TRUE(copy.dispatch_future([&]() -> weft::task<void> {
        co_await weft::yield_now();
        if (thread_id() != host) wrong_thread.fetch_add(1);
        futures_done.fetch_add(1);
      }));
      auto h = copy.spawn([&, s]() -> weft::task<int> {
        co_await weft::sleep(100us);
        if (thread_id() != host) wrong_thread.fetch_add(1);
        co_return s + 1;
      });
      auto r = h.join();  // blocks this sender until the host has driven the task
      if (r) joined_sum.fetch_add(*r);
      senders_done.fetch_add(1);
    });
  }
  EXPECT_TRUE(drive_until(d, [&] { return senders_done.load() == senders; }));
  for (auto& t : threads) t.join();
  EXPECT_TRUE(drive_until(d, [&] { return futures_done.load() == senders; }));
  EXPECT_EQ(dispatched.load(), senders);
  EXPECT_EQ(joined_sum.load(), 1 + 2 + 3);
  EXPECT_EQ(wrong_thread.load(), 0);
}

TEST(local_domain, tasks_stay_on_the_host_thread_across_awaits_and_foreign_wakes) {
  weft::local_domain d;
  const std::uint64_t host = thread_id();
  auto gate = std::make_shared<weft_test::remote_gate>();
  auto h = d.spawn([gate, host]() -> weft::task<int> {
    int moved = 0;
    for (int i = 0; i < 5; ++i) {
      co_await weft::sleep(50us);
      if (thread_id() != host) ++moved;
      co_await weft::yield_now();
      if (thread_id() != host) ++moved;
    }
    co_await gate->wait();
    if (thread_id() != host) ++moved;
    co_return moved;
  });
  std::thread opener([gate] {
    EXPECT_TRUE(weft_test::eventually([&] { return gate->has_waiter(); }, weft_test::generous));
    gate->open_and_wake();
  });
  EXPECT_TRUE(drive_until(d, [&] { return h.is_finished(); }));
  opener.join();
  EXPECT_EQ(h.join().value(), 0);
}

TEST(local_domain, a_throwing_dispatch_leaves_the_domain_drivable) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  weft::local_domain d(weft_test::with_sink(sink));
  auto sp = d.spawner();
  int after = 0;
  std::thread([&] {
    EXPECT_TRUE(sp.dispatch([] { throw std::runtime_error("dispatched failure"); }));
    EXPECT_TRUE(sp.dispatch_future([]() -> weft::task<void> {
      throw std::runtime_error("future failure");
      co_return;
    }));
    EXPECT_TRUE(sp.dispatch([&] { ++after; }));
  }).join();
  (void)d.run_for(30s);
  EXPECT_EQ(after, 1);
  ASSERT_EQ(sink->count_of(weft::telemetry_kind::callback_panicked), 1u);
  EXPECT_EQ(weft_test::what_of(sink->events_of(weft::telemetry_kind::callback_panicked)[0].exception),
            "dispatched failure");
  // A spawned task that throws is panicked, and the domain still runs the next one.
  auto bad = sp.spawn([]() -> weft::task<int> {
    throw std::logic_error("task failure");
    co_return 0;
  });
  auto good = sp.spawn([]() -> weft::task<int> { co_return 3; });
  (void)d.run_for(30s);
  auto br = bad.join();
  ASSERT_FALSE(br);
  EXPECT_TRUE(br.error().is_panicked());
  EXPECT_EQ(good.join().value(), 3);
}

TEST(local_domain, a_spawner_that_outlives_its_domain_is_refused_as_closed) {
  std::optional<weft::local_domain> d;
  d.emplace();
  auto sp = d->spawner();
  d.reset();
  std::atomic<int> ran{0};
  std::thread([&] {
    const weft::submit_result a = sp.dispatch([&] { ran.fetch_add(1); });
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error(), weft::queue_error::closed);
    const weft::submit_result b = sp.dispatch_future([&]() -> weft::task<void> {
      ran.fetch_add(1);
      co_return;
    });
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), weft::queue_error::closed);
    auto h = sp.spawn([&]() -> weft::task<int> {
      ran.fetch_add(1);
      co_return 1;
    });
    ASSERT_TRUE(h.is_finished());
    auto r = h.join();
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_rejected());
    EXPECT_EQ(r.error().rejection_reason(), weft::queue_error::closed);
  }).join();
  EXPECT_EQ(ran.load(), 0);
  weft::local_spawner empty;
  EXPECT_EQ(empty.dispatch([] {}).error(), weft::queue_error::closed);
}

TEST(local_domain, destroying_the_domain_cancels_its_unfinished_tasks_on_the_host) {
  weft_test::drop_record frame;
  const std::uint64_t host = thread_id();
  weft::join_handle<int> h;
  {
    weft::local_domain d;
    auto gate = std::make_shared<weft_test::remote_gate>();
    h = d.spawn([gate, &frame]() -> weft::task<int> {
      weft_test::drop_probe probe(&frame);
      co_await gate->wait();
      co_return 1;
    });
    EXPECT_EQ(d.run_n(5), 1u);
  }
  EXPECT_EQ(frame.drops.load(), 1);
  EXPECT_EQ(frame.last_thread.load(), host);
  EXPECT_TRUE(h.join().error().is_cancelled());
}
