// tests/runtime/task_affinity_test.cpp — tasks never change thread: every resumption of a task
// (after yields, sleeps, joins, blocking results, and wakes from other workers and from foreign
// threads) happens on the thread that first polled it, and its frame is destroyed there.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using namespace std::chrono_literals;
using weft_test::thread_id;

namespace {

// Where a task found itself after each await: seam id and OS id.
struct trace {
  std::uint64_t first_seam = 0;
  std::thread::id first_os;
  std::size_t worker = 0;
  int resumptions = 0;
  int moved = 0;   // resumptions on another thread than the first (must stay 0)
  int failed = 0;  // awaited operations that did not produce their value
  void start() {
    first_seam = thread_id();
    first_os = std::this_thread::get_id();
    worker = weft_test::on_worker();
  }
  void check() {
    ++resumptions;
    if (thread_id() != first_seam || std::this_thread::get_id() != first_os || weft_test::on_worker() != worker) {
      ++moved;
    }
  }
};

constexpr int rounds = 10;
constexpr int awaits_per_round = 6;

// The gates one wandering task waits on: gates[2r] is opened by a foreign std::thread, gates[2r+1]
// by a task on another worker, each only once the wanderer registered its waker there (so the
// wake really crosses threads).
struct gate_set {
  std::deque<weft_test::remote_gate> gates{static_cast<std::size_t>(2 * rounds)};  // deque: not movable
};

weft::task<trace> wander(std::shared_ptr<gate_set> mine, weft::scheduler elsewhere) {
  trace t;
  t.start();
  for (int r = 0; r < rounds; ++r) {
    co_await weft::yield_now();
    t.check();
    co_await weft::sleep(50us);  // a timer of this worker
    t.check();
    co_await mine->gates[static_cast<std::size_t>(2 * r)].wait();  // woken by a foreign thread
    t.check();
    co_await mine->gates[static_cast<std::size_t>(2 * r + 1)].wait();  // woken by another worker
    t.check();
    // A child on another worker: its completion wakes us from that worker.
    auto far = co_await elsewhere.spawn([]() -> weft::task<std::uint64_t> {
      co_await weft::yield_now();
      co_return thread_id();
    });
    if (!far || *far == t.first_seam) ++t.failed;
    t.check();
    // A blocking callback: its completion wakes us from a pool thread.
    auto blocking = co_await weft::builtins::current().scheduler().spawn_blocking([] { return thread_id(); });
    if (!blocking || *blocking == t.first_seam) ++t.failed;
    t.check();
  }
  co_return t;
}

// Runs on a worker other than the wanderer's: opens the odd gates once each has a waiter.
weft::task<int> open_odd_gates(std::shared_ptr<gate_set> theirs) {
  int opened = 0;
  for (int r = 0; r < rounds; ++r) {
    auto& g = theirs->gates[static_cast<std::size_t>(2 * r + 1)];
    for (int tries = 0; !g.has_waiter() && tries < 200'000; ++tries) co_await weft::sleep(20us);
    g.open_and_wake();
    ++opened;
  }
  co_return opened;
}

}  // namespace

TEST(task_affinity, tasks_never_change_thread_across_awaits_and_cross_thread_wakes) {
  constexpr std::size_t workers = 3;
  constexpr std::size_t per_worker = 2;
  auto rt = weft::runtime::builder().workers(workers).build();

  std::vector<std::shared_ptr<gate_set>> sets;
  std::vector<weft::join_handle<trace>> wanderers;
  std::vector<weft::join_handle<int>> openers;
  for (std::size_t w = 0; w < workers; ++w) {
    for (std::size_t k = 0; k < per_worker; ++k) {
      auto set = std::make_shared<gate_set>();
      sets.push_back(set);
      wanderers.push_back(rt.worker_scheduler(w).spawn(
          [set, other = rt.worker_scheduler((w + 1) % workers)] { return wander(set, other); }));
      openers.push_back(rt.worker_scheduler((w + 2) % workers).spawn([set] { return open_odd_gates(set); }));
    }
  }

  // The foreign opener: even gates, round by round.
  std::atomic<int> foreign_timeouts{0};
  std::thread foreign([&] {
    for (int r = 0; r < rounds; ++r) {
      for (auto& set : sets) {
        auto& g = set->gates[static_cast<std::size_t>(2 * r)];
        if (!weft_test::eventually([&] { return g.has_waiter(); }, weft_test::generous)) foreign_timeouts.fetch_add(1);
        g.open_and_wake();
      }
    }
  });
  foreign.join();
  EXPECT_EQ(foreign_timeouts.load(), 0);

  std::vector<std::uint64_t> first_threads;
  for (std::size_t i = 0; i < wanderers.size(); ++i) {
    auto r = wanderers[i].join();
    ASSERT_TRUE(r) << weft::to_string(r.error().get_kind());
    EXPECT_EQ(r->worker, i / per_worker);
    EXPECT_EQ(r->resumptions, rounds * awaits_per_round);
    EXPECT_EQ(r->moved, 0) << "task " << i << " resumed on another thread";
    EXPECT_EQ(r->failed, 0);
    first_threads.push_back(r->first_seam);
  }
  for (auto& o : openers) EXPECT_EQ(o.join().value(), rounds);
  // Tasks of one worker share its thread; different workers have different threads.
  for (std::size_t i = 0; i < first_threads.size(); ++i) {
    for (std::size_t j = 0; j < first_threads.size(); ++j) {
      EXPECT_EQ(first_threads[i] == first_threads[j], i / per_worker == j / per_worker);
    }
  }
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(task_affinity, a_waker_called_from_a_foreign_thread_never_polls_there) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto gate = std::make_shared<weft_test::remote_gate>();
  std::atomic<std::uint64_t> polled_on{0};
  struct watching_leaf {
    weft_test::remote_gate* g;
    std::atomic<std::uint64_t>* polled_on;
    bool poll_ready(const weft::waker& w) {
      polled_on->store(thread_id());
      return g->poll_ready(w);
    }
    void await_resume() const noexcept {}
  };
  auto h = rt.worker_scheduler(1).spawn([gate, &polled_on]() -> weft::task<std::uint64_t> {
    co_await watching_leaf{gate.get(), &polled_on};
    co_return thread_id();
  });
  ASSERT_TRUE(weft_test::eventually([&] { return gate->has_waiter(); }, weft_test::generous));
  const std::uint64_t worker_thread = polled_on.load();
  std::uint64_t caller = 0;
  std::thread waker_thread([&] {
    caller = thread_id();
    const weft::waker w = gate->waiter();
    for (int i = 0; i < 50; ++i) w.wake();  // duplicate wakes before the gate opens: harmless
    gate->open_and_wake();
  });
  waker_thread.join();
  auto r = h.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, worker_thread);
  EXPECT_NE(caller, worker_thread);
  EXPECT_EQ(polled_on.load(), worker_thread);  // every poll, the last included, ran on the worker
}

TEST(task_affinity, many_short_tasks_each_stay_on_the_worker_that_took_them) {
  auto rt = weft::runtime::builder().workers(4).build();
  std::vector<weft::join_handle<int>> handles;
  for (int i = 0; i < 200; ++i) {
    handles.push_back(rt.scheduler().spawn_anywhere([]() -> weft::task<int> {
      const std::uint64_t first = thread_id();
      int moved = 0;
      for (int k = 0; k < 5; ++k) {
        if (k % 2 == 0) {
          co_await weft::yield_now();
        } else {
          co_await weft::sleep(10us);
        }
        if (thread_id() != first) ++moved;
      }
      co_return moved;
    }));
  }
  for (auto& h : handles) EXPECT_EQ(h.join().value(), 0);
}
