// stealing_pool_test.cpp — weft::stealing_pool: spawning and joining, moving work between
// workers, priorities, the cooperative budget, shutdown outcomes, stats and knob checks.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <weft/detail/work_deque.hpp>

#include "support.hpp"

namespace {

using weft::priority;
using weft::stealing_pool;
using weft::task;

stealing_pool make_pool(std::size_t workers) { return stealing_pool::builder().workers(workers).build(); }

// Keeps one pool worker's thread busy (a task that spins, not one that suspends) from construction
// until release(), so work queued meanwhile waits and is then picked in the pool's own order.
class worker_hold {
 public:
  explicit worker_hold(stealing_pool& pool)
      : handle_(pool.spawn(priority::high, [this]() -> task<void> {
          started_.store(true);
          while (!released_.load()) std::this_thread::yield();
          co_return;
        })) {
    while (!started_.load()) std::this_thread::yield();
  }
  ~worker_hold() {
    release();
    (void)handle_.join();
  }
  void release() { released_.store(true); }

 private:
  std::atomic<bool> started_{false};
  std::atomic<bool> released_{false};
  weft::join_handle<void> handle_;
};

task<std::uint64_t> tree_sum(stealing_pool* pool, int depth) {
  if (depth == 0) co_return 1;
  auto left = pool->spawn(priority::normal, [pool, depth] { return tree_sum(pool, depth - 1); });
  auto right = pool->spawn(priority::normal, [pool, depth] { return tree_sum(pool, depth - 1); });
  const std::uint64_t a = (co_await left).value();
  const std::uint64_t b = (co_await right).value();
  co_return a + b;
}

TEST(StealingPool, SpawnsFactoriesAndTasksAndJoinsTheirValues) {
  auto pool = make_pool(2);
  auto a = pool.spawn(priority::high, []() -> task<int> { co_return 7; });
  auto b = pool.spawn([]() -> task<int> { co_return 8; }());
  EXPECT_EQ(a.join().value(), 7);
  EXPECT_EQ(b.join().value(), 8);
  EXPECT_EQ(pool.block_on([]() -> task<int> { co_return 9; }()), 9);
  EXPECT_TRUE(std::move(pool).stop().is_complete());
}

TEST(StealingPool, NestedSpawnsFromWorkersAllComplete) {
  auto pool = make_pool(2);
  const int depth = 12;  // 2^12 leaves, 2^13 - 1 tasks
  auto h = pool.spawn(priority::normal, [&pool] { return tree_sum(&pool, depth); });
  EXPECT_EQ(h.join().value(), std::uint64_t{1} << depth);
  const weft::pool_stats s = pool.stats();
  EXPECT_GE(s.polls, (std::uint64_t{1} << (depth + 1)) - 1);
  EXPECT_GE(s.spawned_on_workers, (std::uint64_t{1} << (depth + 1)) - 2);
  EXPECT_EQ(s.spawned_external, 1u);
  EXPECT_TRUE(std::move(pool).stop().is_complete());
}

TEST(StealingPool, SpawnBatchKeepsOrderOfHandles) {
  auto pool = make_pool(2);
  std::vector<std::function<task<int>()>> works;
  for (int i = 0; i < 100; ++i) works.emplace_back([i]() -> task<int> { co_return i * 2; });
  auto handles = pool.spawn_batch(priority::background, works);
  ASSERT_EQ(handles.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(handles[static_cast<std::size_t>(i)].join().value(), i * 2);
}

// A worker that has a queue of local work while another is idle: the idle one steals. Each child
// waits until two different threads have run children, so without stealing the first child would
// hold its worker until the deadline and the check fails.
TEST(StealingPool, AnIdleWorkerStealsFromABusyOne) {
  auto pool = make_pool(2);
  std::mutex lock;
  std::set<std::uint64_t> threads;
  auto parent = pool.spawn(priority::normal, [&]() -> task<bool> {
    std::vector<weft::join_handle<bool>> children;
    for (int i = 0; i < 64; ++i) {
      children.push_back(pool.spawn(priority::normal, [&]() -> task<bool> {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        {
          std::lock_guard<std::mutex> hold(lock);
          threads.insert(weft_test::thread_id());
        }
        for (;;) {
          {
            std::lock_guard<std::mutex> hold(lock);
            if (threads.size() >= 2) co_return true;
          }
          if (std::chrono::steady_clock::now() > deadline) co_return false;
          std::this_thread::yield();
        }
      }));
    }
    bool all = true;
    for (auto& c : children) all = (co_await c).value() && all;
    co_return all;
  });
  EXPECT_TRUE(parent.join().value());
  EXPECT_GE(pool.stats().steals, 1u);
}

// One worker, held busy while work of all three priorities queues up from outside: once released,
// it picks by weighted opportunity (8:4:1), so high work starts first most often, but background
// work is not left for last.
TEST(StealingPool, PrioritiesGetWeightedOpportunities) {
  auto pool = make_pool(1);
  worker_hold hold(pool);  // the only worker is busy until hold.release()
  std::mutex lock;
  std::vector<priority> order;
  std::vector<weft::join_handle<void>> handles;
  for (priority p : {priority::background, priority::normal, priority::high}) {
    for (int i = 0; i < 40; ++i) {
      handles.push_back(pool.spawn(p, [&, p]() -> task<void> {
        std::lock_guard<std::mutex> hold(lock);
        order.push_back(p);
        co_return;
      }));
    }
  }
  hold.release();
  for (auto& h : handles) ASSERT_TRUE(h.join().has_value());
  ASSERT_EQ(order.size(), 120u);
  // The first 26 starts span two selector cycles, 16 high, 8 normal and 2 background, give or
  // take one where the window meets a cycle's middle.
  int high = 0, normal = 0, background = 0;
  for (std::size_t i = 0; i < 26; ++i) {
    high += order[i] == priority::high;
    normal += order[i] == priority::normal;
    background += order[i] == priority::background;
  }
  EXPECT_NEAR(high, 16, 1);
  EXPECT_NEAR(normal, 8, 1);
  EXPECT_NEAR(background, 2, 1);
}

TEST(StealingPool, WeightsFromTheBuilderAreHonoured) {
  auto pool = stealing_pool::builder().workers(1).weights({1, 1, 2}).build();
  worker_hold hold(pool);  // the only worker is busy until hold.release()
  std::vector<priority> order;
  std::vector<weft::join_handle<void>> handles;
  for (priority p : {priority::high, priority::normal, priority::background}) {
    for (int i = 0; i < 20; ++i) {
      handles.push_back(pool.spawn(p, [&, p]() -> task<void> {
        order.push_back(p);  // one worker: no two tasks run at once
        co_return;
      }));
    }
  }
  hold.release();
  for (auto& h : handles) ASSERT_TRUE(h.join().has_value());
  int background = 0;
  for (std::size_t i = 0; i < 12; ++i) background += order[i] == priority::background;
  EXPECT_NEAR(background, 6, 1);  // 2 of every 4 opportunities
}

// A leaf that is always ready: awaiting it never suspends by itself.
struct always_ready {
  bool poll_ready(const weft::waker&) const noexcept { return true; }
  void await_resume() const noexcept {}
};

TEST(StealingPool, TheCooperativeBudgetStopsOneTaskFromKeepingAWorker) {
  auto pool = make_pool(1);
  worker_hold hold(pool);  // the only worker is busy until hold.release()
  std::atomic<bool> other_ran{false};
  auto hog = pool.spawn(priority::normal, [&]() -> task<bool> {
    for (int i = 0; i < 10'000; ++i) co_await always_ready{};
    co_return other_ran.load();
  });
  auto other = pool.spawn(priority::normal, [&]() -> task<void> {
    other_ran.store(true);
    co_return;
  });
  hold.release();
  EXPECT_TRUE(hog.join().value());  // the other task ran while the hog was still looping
  ASSERT_TRUE(other.join().has_value());
}

// A task that keeps re-queuing itself on its worker (yield_now: the local queue) must not keep a
// task submitted from outside at its priority waiting: after local_burst local pops in a row the
// worker looks at the injector first, also while the other priorities have nothing queued.
TEST(StealingPool, ALocalBurstLetsExternalWorkInAtEveryPriority) {
  constexpr int yields_max = 10'000;  // yields after the submission: far more than local_burst (32)
  for (priority p : {priority::high, priority::normal, priority::background}) {
    auto pool = make_pool(1);
    std::atomic<bool> started{false};
    std::atomic<bool> submitted{false};
    std::atomic<bool> outside_ran{false};
    auto spinner = pool.spawn(p, [&]() -> task<bool> {
      started.store(true);
      // Counts only the yields after the outside task was queued, however late that happens.
      for (int after = 0; after < yields_max && !outside_ran.load(); after += submitted.load() ? 1 : 0) {
        co_await weft::yield_now();
      }
      co_return outside_ran.load();
    });
    while (!started.load()) std::this_thread::yield();
    auto outside = pool.spawn(p, [&]() -> task<void> {
      outside_ran.store(true);
      co_return;
    });
    submitted.store(true);
    EXPECT_TRUE(spinner.join().value()) << "priority " << weft::to_string(p);
    ASSERT_TRUE(outside.join().has_value());
  }
}

TEST(StealingPool, YieldNowRequeuesBehindOtherWork) {
  auto pool = make_pool(1);
  worker_hold hold(pool);  // the only worker is busy until hold.release()
  std::vector<int> order;
  auto a = pool.spawn(priority::normal, [&]() -> task<void> {
    order.push_back(1);
    co_await weft::yield_now();
    order.push_back(3);
  });
  auto b = pool.spawn(priority::normal, [&]() -> task<void> {
    order.push_back(2);
    co_return;
  });
  hold.release();
  ASSERT_TRUE(a.join().has_value());
  ASSERT_TRUE(b.join().has_value());
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

// More yielding tasks than a local queue holds, all on one worker: those behind the full queue wait
// in the worker's overflow, which stats() counts with the queue, and every one of them runs every
// poll it asks for (nothing is lost between the queue, the overflow and the injector).
TEST(StealingPool, YieldsBehindAFullLocalQueueWaitInTheOverflowAndAllRun) {
  auto pool = make_pool(1);
  constexpr int tasks = 1'000;
  constexpr int yields = 64;
  std::vector<int> polls(tasks, 0);
  std::size_t most_local = 0;  // the worker's thread only
  auto root = pool.spawn(priority::normal, [&]() -> task<bool> {
    std::vector<weft::join_handle<void>> children;
    for (int i = 0; i < tasks; ++i) {
      children.push_back(pool.spawn(priority::normal, [&, i]() -> task<void> {
        for (int y = 0; y < yields; ++y) {
          ++polls[static_cast<std::size_t>(i)];
          most_local = std::max(most_local, pool.stats().runnable_local[1]);
          co_await weft::yield_now();
        }
        ++polls[static_cast<std::size_t>(i)];
      }));
    }
    bool all = true;
    for (auto& c : children) all = (co_await c).has_value() && all;
    co_return all;
  });
  ASSERT_TRUE(root.join().value());
  for (int i = 0; i < tasks; ++i) ASSERT_EQ(polls[static_cast<std::size_t>(i)], yields + 1) << "task " << i;
  EXPECT_GT(most_local, std::size_t{weft::detail::work_deque_capacity});
}

TEST(StealingPool, JoinErrorsAbortAndDetach) {
  auto pool = make_pool(2);
  auto thrower = pool.spawn(priority::normal, []() -> task<int> {
    throw std::runtime_error("boom");
    co_return 1;
  });
  auto r = thrower.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().is_panicked());

  weft_test::remote_gate never;
  auto waiting = pool.spawn(priority::normal, [&]() -> task<void> { co_await never.wait(); });
  waiting.abort();
  auto w = waiting.join();
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error(), weft::join_error::cancelled);

  std::atomic<bool> ran{false};
  pool.spawn(priority::background, [&]() -> task<void> {
    ran.store(true);
    co_return;
  }).detach();
  EXPECT_EQ(std::move(pool).stop_graceful().get_kind(), weft::stop_outcome::complete);
  EXPECT_TRUE(ran.load());
}

TEST(StealingPool, DrainFinishesAcceptedWorkAndRejectsNewWork) {
  auto pool = make_pool(2);
  std::vector<std::unique_ptr<weft_test::remote_gate>> gates;
  std::atomic<int> finished{0};
  std::vector<weft::join_handle<void>> handles;
  for (int i = 0; i < 10; ++i) {
    gates.push_back(std::make_unique<weft_test::remote_gate>());
    handles.push_back(pool.spawn(priority::normal, [&finished, g = gates.back().get()]() -> task<void> {
      co_await g->wait();
      finished.fetch_add(1);
    }));
  }
  std::thread opener([&] {
    while (!pool.stop_requested()) std::this_thread::yield();
    for (auto& g : gates) g->open_and_wake();
  });
  EXPECT_EQ(pool.drain(), weft::drain_outcome::drained);
  opener.join();
  EXPECT_EQ(finished.load(), 10);
  auto late = pool.spawn(priority::high, []() -> task<void> { co_return; });
  auto lr = late.join();
  ASSERT_FALSE(lr.has_value());
  EXPECT_EQ(lr.error(), weft::join_error::rejected);
  EXPECT_TRUE(std::move(pool).stop().is_complete());
}

TEST(StealingPool, StopCancelsUnfinishedTasksAndCountsThem) {
  auto pool = make_pool(2);
  weft_test::remote_gate never;
  std::vector<weft::join_handle<void>> handles;
  for (int i = 0; i < 5; ++i) {
    handles.push_back(pool.spawn(priority::normal, [&]() -> task<void> { co_await never.wait(); }));
  }
  while (!never.has_waiter()) std::this_thread::yield();
  const weft::stop_outcome out = std::move(pool).stop();
  ASSERT_TRUE(out.is_incomplete()) << weft::to_string(out);
  EXPECT_EQ(out.counts().tasks_cancelled, 5u);
  for (auto& h : handles) {
    auto r = h.join();
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), weft::join_error::cancelled);
  }
  EXPECT_EQ(std::move(pool).stop(), out);  // later calls repeat it
}

// The calling thread's kernel id. (Not std::this_thread::get_id(): pthread_self() is declared
// const, so a compiler may reuse its value across a coroutine's suspension.)
long kernel_thread_id() { return ::syscall(SYS_gettid); }

// A task belongs to the task list of the worker that polled it first; one that then moves and
// completes on the other worker is handed back to the first, which unlinks and frees it (under
// ASan a cell the hand-back kept would be reported as a leak at exit). Rounds repeat until some
// task has been seen to move.
TEST(StealingPool, TasksThatFinishOnAnotherWorkerAreHandedBackAndFreed) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  std::atomic<int> moved{0};
  std::atomic<int> finished{0};
  int spawned = 0;
  {
    auto pool = stealing_pool::builder().workers(2).telemetry(sink).build();
    for (int round = 0; round < 50 && moved.load() == 0; ++round) {
      // Spawned from a pool task: all of them queue on its worker, and the other one steals.
      auto root = pool.spawn(priority::normal, [&]() -> task<void> {
        std::vector<weft::join_handle<void>> handles;
        for (int i = 0; i < 256; ++i, ++spawned) {
          handles.push_back(pool.spawn(priority::normal, [&]() -> task<void> {
            // Yields until some task has moved (the other worker steals from this one's queue),
            // or for a bounded while.
            const long first = kernel_thread_id();
            for (int y = 0; y < 2'000 && moved.load() == 0; ++y) {
              co_await weft::yield_now();
              if (kernel_thread_id() != first) break;
            }
            if (kernel_thread_id() != first) moved.fetch_add(1);
            finished.fetch_add(1);
          }));
        }
        for (auto& h : handles) EXPECT_TRUE((co_await h).has_value());
      });
      ASSERT_TRUE(root.join().has_value());
    }
    EXPECT_GT(moved.load(), 0) << "no task ever completed on another worker than its first poll's";
    EXPECT_EQ(finished.load(), spawned);
    EXPECT_TRUE(std::move(pool).stop().is_complete());
  }
  // Every cell released its level's owner, and the owners the core (a handed-back cell never
  // released would keep them).
  EXPECT_EQ(sink.use_count(), 1);
}

TEST(StealingPool, StopOnAWorkerReportsTheErrorAndClosesAdmission) {
  auto pool = make_pool(1);
  auto h = pool.spawn(priority::normal, [&]() -> task<weft::stop_outcome> {
    co_return std::move(pool).stop();
  });
  const weft::stop_outcome out = h.join().value();
  ASSERT_TRUE(out.is_error());
  EXPECT_EQ(out.error_reason(), weft::stop_error::called_from_worker);
  EXPECT_TRUE(pool.stop_requested());
  EXPECT_EQ(pool.drain(), weft::drain_outcome::drained);  // off the workers, the pool can wait
  EXPECT_TRUE(std::move(pool).stop().is_complete());
}

TEST(StealingPool, BuilderRejectsKnobsOutOfRange) {
  auto message = [](auto&& build) -> std::string {
    try {
      build();
    } catch (const weft::usage_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([] { (void)stealing_pool::builder().workers(0).build(); }).find("workers = 0"), std::string::npos);
  EXPECT_NE(message([] { (void)stealing_pool::builder().weights({0, 4, 1}).build(); }).find("weights.high = 0"),
            std::string::npos);
  EXPECT_NE(message([] { (void)stealing_pool::builder().weights({8, 4, 5000}).build(); })
                .find("weights.background = 5000"),
            std::string::npos);
  EXPECT_NE(message([] { (void)stealing_pool::builder().local_burst(0).build(); }).find("local_burst = 0"),
            std::string::npos);
}

TEST(StealingPool, PoolTasksGetUsageErrorsForThreadBoundThings) {
  auto pool = make_pool(1);
  weft::pinned<int> mine(5);
  EXPECT_EQ(*mine, 5);
  auto touch = pool.spawn(priority::normal, [&]() -> task<int> { co_return *mine; });
  auto r = touch.join();
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_THROW(std::rethrow_exception(r.error().exception()), weft::usage_error);

  auto sleeper = pool.spawn(priority::normal, []() -> task<void> { co_await weft::sleep(std::chrono::milliseconds(1)); });
  auto s = sleeper.join();
  ASSERT_FALSE(s.has_value());
  EXPECT_THROW(std::rethrow_exception(s.error().exception()), weft::usage_error);
}

// CPU work on the pool, its result handed back to a pinned runtime worker that awaits it.
TEST(StealingPool, AResultHandsBackToARuntimeWorker) {
  auto pool = make_pool(2);
  auto rt = weft::runtime::builder().workers(1).build();
  auto h = rt.scheduler().spawn_anywhere([&]() -> task<std::uint64_t> {
    auto on_pool = pool.spawn(priority::high, []() -> task<std::uint64_t> {
      std::uint64_t s = 0;
      for (std::uint64_t i = 1; i <= 1000; ++i) s += i;
      co_return s;
    });
    co_return (co_await on_pool).value();
  });
  EXPECT_EQ(h.join().value(), 500'500u);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
  EXPECT_TRUE(std::move(pool).stop().is_complete());
}

}  // namespace

namespace {

TEST(StealingPool, StatsCountParksAndWakesAndStayZeroWhenOff) {
  {
    auto pool = make_pool(2);
    // Let both workers park, then wake one from outside.
    while (pool.stats().parked_workers < 2) std::this_thread::yield();
    auto h = pool.spawn(priority::normal, []() -> task<int> { co_return 1; });
    ASSERT_EQ(h.join().value(), 1);
    const weft::pool_stats s = pool.stats();
    EXPECT_EQ(s.workers, 2u);
    EXPECT_GE(s.parks, 2u);
    EXPECT_GE(s.wake_notifications, 1u);
    EXPECT_EQ(s.spawned_external, 1u);
    EXPECT_GE(s.polls, 1u);
    EXPECT_GE(s.injector_batches, 1u);
  }
  {
    auto pool = stealing_pool::builder().workers(1).stats(false).build();
    auto h = pool.spawn(priority::normal, []() -> task<int> { co_return 2; });
    ASSERT_EQ(h.join().value(), 2);
    const weft::pool_stats s = pool.stats();
    EXPECT_EQ(s.workers, 1u);
    EXPECT_EQ(s.polls, 0u);
    EXPECT_EQ(s.spawned_external, 0u);
    EXPECT_EQ(s.wake_notifications, 0u);
  }
}

}  // namespace

// Workers keep stashes of owner references (task_owner.hpp): every reference must still be
// counted, so the pool's core goes exactly when the last handle does, after the pool is gone.
TEST(StealingPool, TheCoreOutlivesThePoolUntilItsLastHandleGoes) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  constexpr int kept_count = 300;  // more than a stash holds: stashes fill, spill and refill
  std::vector<weft::join_handle<int>> kept;
  {
    auto pool = stealing_pool::builder().workers(2).telemetry(sink).build();
    kept = pool.block_on([&pool]() -> task<std::vector<weft::join_handle<int>>> {
      std::vector<weft::join_handle<int>> handles;
      for (int i = 0; i < kept_count; ++i) {
        handles.push_back(pool.spawn([i]() -> task<int> { co_return i; }));
        // Detached ones are freed where they complete, on a worker: back into its stash.
        pool.spawn([]() -> task<void> { co_return; }).detach();
      }
      co_return handles;
    }());
    EXPECT_EQ(pool.drain(), weft::drain_outcome::drained);  // every task finishes, detached ones too
    EXPECT_TRUE(std::move(pool).stop().is_complete());
  }
  EXPECT_GT(sink.use_count(), 1);  // the handles' cells hold the owners, the owners the core
  for (int i = 0; i < kept_count; ++i) EXPECT_EQ(kept[static_cast<std::size_t>(i)].join().value(), i);
  kept.clear();
  EXPECT_EQ(sink.use_count(), 1);  // the last reference freed the core
}
