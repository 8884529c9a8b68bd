// tests/runtime/blocking_test.cpp — spawn_blocking: results, panics, the governed capacity
// (saturation is a typed `full`), blocking policies, and what shutdown does to blocking work.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using weft_test::flag;
using weft_test::thread_id;

namespace {

std::set<std::uint64_t> worker_thread_set(weft::runtime& rt) {
  std::set<std::uint64_t> ids;
  for (std::size_t i = 0; i < rt.worker_count(); ++i) {
    ids.insert(rt.worker_scheduler(i).spawn([]() -> weft::task<std::uint64_t> { co_return thread_id(); }).join().value());
  }
  return ids;
}

template <class T>
void expect_rejected(weft::join_handle<T>& h, weft::queue_error why) {
  ASSERT_TRUE(h.is_finished());  // refused at once
  auto r = h.join();
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().is_rejected());
  EXPECT_EQ(r.error().rejection_reason(), why);
}

}  // namespace

TEST(blocking, spawn_blocking_returns_the_result_from_a_thread_off_the_workers) {
  auto rt = weft::runtime::builder().workers(2).build();
  const auto workers = worker_thread_set(rt);

  struct seen {
    std::uint64_t thread;
    bool has_builtins;
  };
  auto from_outside = rt.scheduler().spawn_blocking([] {
    return seen{thread_id(), weft::builtins::try_current() != nullptr};
  });
  auto r = from_outside.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(workers.count(r->thread), 0u);  // not a worker thread
  EXPECT_FALSE(r->has_builtins);

  // Awaited from a task, with a move-only result and a void callback.
  auto from_task = rt.scheduler().spawn([]() -> weft::task<int> {
    auto& sched = weft::builtins::current().scheduler();
    auto p = co_await sched.spawn_blocking([] { return std::make_unique<int>(40); });
    int side = 0;
    auto v = co_await sched.spawn_blocking([&side] { side = 2; });
    if (!p || !v) co_return -1;
    co_return **p + side;
  });
  EXPECT_EQ(from_task.join().value(), 42);
}

TEST(blocking, a_throwing_callback_completes_as_panicked_with_its_exception) {
  auto rt = weft::runtime::builder().workers(1).build();
  auto h = rt.scheduler().spawn_blocking([]() -> int { throw std::invalid_argument("bad input"); });
  auto r = h.join();
  ASSERT_FALSE(r);
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_EQ(weft_test::what_of(r.error().exception()), "bad input");
  // The pool goes on.
  EXPECT_EQ(rt.scheduler().spawn_blocking([] { return 5; }).join().value(), 5);
}

TEST(blocking, saturation_is_rejected_as_full_and_the_refused_callback_never_runs) {
  auto rt = weft::runtime::builder().workers(1).blocking_capacity(1, 1).build();
  auto sched = rt.scheduler();
  flag first_running;
  flag release;
  std::atomic<int> ran{0};

  auto first = sched.spawn_blocking([&] {
    first_running.set();
    EXPECT_TRUE(release.wait());
    return ran.fetch_add(1) >= 0 ? 1 : 0;
  });
  ASSERT_TRUE(first_running.wait());  // the one thread is busy now
  auto second = sched.spawn_blocking([&] { return ran.fetch_add(1) >= 0 ? 2 : 0; });  // the one queue slot
  EXPECT_FALSE(second.is_finished());
  std::atomic<bool> third_ran{false};
  auto third = sched.spawn_blocking([&] {
    third_ran = true;
    return 3;
  });
  expect_rejected(third, weft::queue_error::full);

  release.set();
  EXPECT_EQ(first.join().value(), 1);
  EXPECT_EQ(second.join().value(), 2);
  EXPECT_FALSE(third_ran.load());
  EXPECT_EQ(ran.load(), 2);
  // `full` is about now: once the pool has room again, a submission is accepted.
  EXPECT_EQ(sched.spawn_blocking([] { return 4; }).join().value(), 4);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

namespace {
// Fills worker 0's blocking pool (one thread busy, one callback queued) of a runtime with
// blocking_capacity(1, 1), then asks worker 1's scheduler for blocking work. Returns the answer
// to worker 1 (its value, or the rejection).
struct saturation_probe {
  bool worker1_accepted = false;
  bool worker1_ran = false;
  std::uint64_t worker0_pool_thread = 0;
  std::uint64_t worker1_pool_thread = 0;
};

saturation_probe saturate_worker0_then_ask_worker1(weft::blocking_policy policy) {
  auto rt = weft::runtime::builder().workers(2).blocking(policy).blocking_capacity(1, 1).build();
  auto w0 = rt.worker_scheduler(0);
  auto w1 = rt.worker_scheduler(1);
  flag busy;
  flag release;
  saturation_probe probe;
  auto held = w0.spawn_blocking([&] {
    probe.worker0_pool_thread = thread_id();
    busy.set();
    EXPECT_TRUE(release.wait());
  });
  EXPECT_TRUE(busy.wait());
  auto queued = w0.spawn_blocking([] {});
  auto over = w0.spawn_blocking([] {});
  expect_rejected(over, weft::queue_error::full);

  auto other = w1.spawn_blocking([] { return thread_id(); });
  if (other.is_finished()) {  // refused at once?
    auto r = other.join();
    probe.worker1_accepted = r || !r.error().is_rejected();
    probe.worker1_ran = static_cast<bool>(r);
  } else {
    probe.worker1_accepted = true;
    // It must complete while worker 0's pool is still held (bounded wait: no hang on failure).
    probe.worker1_ran = weft_test::eventually([&] { return other.is_finished(); }, weft_test::generous);
    if (probe.worker1_ran) {
      auto r = other.join();
      probe.worker1_ran = static_cast<bool>(r);
      if (r) probe.worker1_pool_thread = *r;
    }
  }
  release.set();
  EXPECT_TRUE(held.join());
  EXPECT_TRUE(queued.join());
  EXPECT_TRUE(std::move(rt).stop().is_complete());
  return probe;
}
}  // namespace

TEST(blocking, per_worker_policy_gives_each_worker_its_own_pool) {
  const saturation_probe p = saturate_worker0_then_ask_worker1(weft::blocking_policy::per_worker);
  EXPECT_TRUE(p.worker1_accepted);
  EXPECT_TRUE(p.worker1_ran);
  EXPECT_NE(p.worker1_pool_thread, p.worker0_pool_thread);
}

TEST(blocking, shared_policy_puts_every_worker_on_one_pool) {
  const saturation_probe p = saturate_worker0_then_ask_worker1(weft::blocking_policy::shared);
  EXPECT_FALSE(p.worker1_accepted);  // the one shared pool is saturated
  EXPECT_FALSE(p.worker1_ran);
}

TEST(blocking, aborting_the_handle_before_the_callback_started_means_it_never_runs) {
  auto rt = weft::runtime::builder().workers(1).blocking_capacity(1, 2).build();
  auto sched = rt.scheduler();
  flag busy;
  flag release;
  auto held = sched.spawn_blocking([&] {
    busy.set();
    EXPECT_TRUE(release.wait());
  });
  ASSERT_TRUE(busy.wait());
  std::atomic<bool> ran{false};
  auto queued = sched.spawn_blocking([&] { ran = true; });
  queued.abort();
  ASSERT_TRUE(weft_test::eventually([&] { return queued.is_finished(); }, weft_test::generous));
  auto r = queued.join();
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().is_cancelled());
  release.set();
  EXPECT_TRUE(held.join());
  // The pool has drained its queue once a later callback has run.
  EXPECT_EQ(sched.spawn_blocking([] { return 1; }).join().value(), 1);
  EXPECT_FALSE(ran.load());
}

TEST(blocking, stop_discards_queued_callbacks_unrun_and_lets_the_running_one_finish) {
  auto rt = std::make_unique<weft::runtime>(weft::runtime::builder().workers(1).blocking_capacity(1, 4).build());
  auto sched = rt->scheduler();
  flag busy;
  flag release;
  std::atomic<bool> running_finished{false};
  auto running = sched.spawn_blocking([&] {
    busy.set();
    EXPECT_TRUE(release.wait());
    running_finished = true;
    return 1;
  });
  ASSERT_TRUE(busy.wait());

  weft_test::drop_record queued_drops;
  std::atomic<int> queued_ran{0};
  std::vector<weft::join_handle<int>> queued;
  for (int i = 0; i < 3; ++i) {
    queued.push_back(sched.spawn_blocking([&queued_ran, probe = std::make_shared<weft_test::drop_probe>(&queued_drops)] {
      queued_ran.fetch_add(1);
      return 2;
    }));
  }
  for (auto& q : queued) ASSERT_FALSE(q.is_finished());

  // stop() waits for the running callback, so it runs on its own thread; the callback is released
  // once the three queued ones were destroyed.
  auto stopped = std::async(std::launch::async, [&] { return std::move(*rt).stop(); });
  ASSERT_TRUE(weft_test::eventually([&] { return queued_drops.drops.load() == 3; }, weft_test::generous));
  EXPECT_FALSE(running_finished.load());
  release.set();
  const weft::stop_outcome out = stopped.get();

  EXPECT_TRUE(running_finished.load());  // stop returned only after the running callback did
  EXPECT_EQ(queued_ran.load(), 0);
  ASSERT_TRUE(out.is_incomplete());
  EXPECT_EQ(out.counts().blocking_discarded, 3u);
  EXPECT_EQ(out.counts().tasks_cancelled, 4u);  // the four awaiting tasks
  EXPECT_EQ(out.counts().callbacks_discarded, 0u);
  for (auto& q : queued) {
    auto r = q.join();
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_cancelled());
  }
  auto rr = running.join();  // its awaiting task was cancelled: the result is dropped
  ASSERT_FALSE(rr);
  EXPECT_TRUE(rr.error().is_cancelled());
  // Later blocking submissions are refused unrun.
  auto late = sched.spawn_blocking([&] { queued_ran.fetch_add(1); });
  expect_rejected(late, weft::queue_error::closed);
  EXPECT_EQ(queued_ran.load(), 0);
}

TEST(blocking, stop_from_inside_a_blocking_callback_is_an_error_not_a_deadlock) {
  auto rt = std::make_unique<weft::runtime>(weft::runtime::builder().workers(2).build());
  weft::runtime* raw = rt.get();
  std::promise<weft::stop_outcome> answer;
  auto future = answer.get_future();
  // The handle is dropped (detached): the awaiting task is cancelled by the very stop it asks for.
  (void)rt->scheduler().spawn_blocking([raw, &answer] { answer.set_value(std::move(*raw).stop()); });
  ASSERT_EQ(future.wait_for(weft_test::generous), std::future_status::ready);
  const weft::stop_outcome out = future.get();
  ASSERT_TRUE(out.is_error());
  EXPECT_EQ(out.error_reason(), weft::stop_error::called_from_blocking_callback);
  // Shutdown was requested all the same, and the runtime is still the owner's to stop: its
  // stop() here waits and reports the real outcome, not the refusal.
  EXPECT_TRUE(rt->stop_requested());
  EXPECT_EQ(rt->worker_count(), 2u);
  const weft::stop_outcome owners = std::move(*rt).stop();
  EXPECT_FALSE(owners.is_error()) << weft::to_string(owners);
}
