// tests/runtime/shutdown_test.cpp — typed shutdown: request_stop, stop outcomes, stop from a
// worker, the destructor, where cancelled frames die, rejected submissions, the shutdown race,
// handles held past shutdown, drain and stop_graceful.
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using namespace std::chrono_literals;
using weft_test::flag;
using weft_test::thread_id;

namespace {

// A task parked on a gate nobody opens; it reports when it is parked, and where its frame dies.
struct parked {
  std::shared_ptr<weft_test::remote_gate> gate = std::make_shared<weft_test::remote_gate>();
  std::shared_ptr<weft_test::drop_record> frame = std::make_shared<weft_test::drop_record>();
  std::shared_ptr<std::atomic<std::uint64_t>> ran_on = std::make_shared<std::atomic<std::uint64_t>>(0);

  auto factory() const {
    return [gate = gate, frame = frame, ran_on = ran_on]() -> weft::task<int> {
      weft_test::drop_probe probe(frame.get());  // a coroutine local: dies with the frame
      ran_on->store(thread_id());
      co_await gate->wait();
      co_return 1;
    };
  }
  bool wait_parked() const { return weft_test::eventually([&] { return gate->has_waiter(); }, weft_test::generous); }
};

}  // namespace

TEST(shutdown, request_stop_is_idempotent_from_copies_and_many_threads) {
  auto rt = weft::runtime::builder().workers(2).build();
  const weft::runtime_operations ops = rt.operations();
  EXPECT_FALSE(ops.stop_requested());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([copy = ops, &rt] {
      for (int i = 0; i < 100; ++i) {
        copy.request_stop();
        rt.request_stop();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(ops.stop_requested());
  EXPECT_TRUE(rt.stop_requested());
  // Refused from now on, and stop() still reports normally.
  auto late = rt.scheduler().spawn([]() -> weft::task<int> { co_return 1; }).join();
  ASSERT_FALSE(late);
  EXPECT_TRUE(late.error().is_rejected());
  EXPECT_TRUE(std::move(rt).stop().is_complete());
  ops.request_stop();  // after the runtime is gone: a no-op
  EXPECT_TRUE(ops.stop_requested());
  weft::runtime_operations empty;
  empty.request_stop();
  EXPECT_FALSE(empty.stop_requested());
}

TEST(shutdown, request_stop_never_waits) {
  // Before the runtime: the blocking callback may still be returning from release.wait() when
  // the test body ends, and only the runtime's destruction waits for it.
  flag busy;
  flag release;
  auto rt = weft::runtime::builder().workers(1).build();
  auto held = rt.scheduler().spawn_blocking([&] {
    busy.set();
    EXPECT_TRUE(release.wait());
  });
  ASSERT_TRUE(busy.wait());
  // A running blocking callback holds up stop(), never request_stop().
  auto asked = std::async(std::launch::async, [ops = rt.operations()] { ops.request_stop(); });
  EXPECT_EQ(asked.wait_for(weft_test::generous), std::future_status::ready);
  release.set();
  asked.wait();
}

TEST(shutdown, stop_is_complete_when_all_accepted_work_had_finished) {
  auto rt = weft::runtime::builder().workers(3).build();
  std::vector<weft::join_handle<int>> hs;
  for (int i = 0; i < 30; ++i) hs.push_back(rt.scheduler().spawn_anywhere([i]() -> weft::task<int> { co_return i; }));
  for (int i = 0; i < 30; ++i) EXPECT_EQ(hs[static_cast<std::size_t>(i)].join().value(), i);
  const weft::stop_outcome out = std::move(rt).stop();
  EXPECT_TRUE(out.is_complete());
  EXPECT_EQ(out, weft::stop_outcome::make_complete());
  EXPECT_EQ(out.counts().total(), 0u);
}

TEST(shutdown, stop_is_incomplete_with_the_exact_count_of_cancelled_tasks) {
  auto rt = weft::runtime::builder().workers(2).build();
  std::vector<parked> tasks(3);
  std::vector<weft::join_handle<int>> hs;
  for (auto& p : tasks) hs.push_back(rt.scheduler().spawn_anywhere(p.factory()));
  for (auto& p : tasks) ASSERT_TRUE(p.wait_parked());
  // A finished task counts for nothing.
  EXPECT_TRUE(rt.scheduler().spawn([]() -> weft::task<int> { co_return 0; }).join());

  const weft::stop_outcome out = std::move(rt).stop();
  ASSERT_TRUE(out.is_incomplete());
  EXPECT_EQ(out.counts().tasks_cancelled, 3u);
  EXPECT_EQ(out.counts().callbacks_discarded, 0u);
  EXPECT_EQ(out.counts().blocking_discarded, 0u);
  for (auto& h : hs) {
    auto r = h.join();
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_cancelled());
  }
}

TEST(shutdown, cancelled_frames_are_destroyed_on_their_own_worker) {
  auto rt = weft::runtime::builder().workers(3).build();
  std::vector<parked> tasks(6);
  std::vector<weft::join_handle<int>> hs;
  for (std::size_t i = 0; i < tasks.size(); ++i) hs.push_back(rt.worker_scheduler(i % 3).spawn(tasks[i].factory()));
  for (auto& p : tasks) ASSERT_TRUE(p.wait_parked());
  const weft::stop_outcome out = std::move(rt).stop();
  EXPECT_EQ(out.counts().tasks_cancelled, 6u);
  for (auto& p : tasks) {
    EXPECT_EQ(p.frame->drops.load(), 1);
    EXPECT_NE(p.ran_on->load(), 0u);
    EXPECT_EQ(p.frame->last_thread.load(), p.ran_on->load());  // died where it ran
    EXPECT_NE(p.frame->last_thread.load(), thread_id());       // not on the stopping thread
  }
}

TEST(shutdown, stop_from_a_worker_returns_the_error_and_the_runtime_still_shuts_down) {
  auto rt = std::make_unique<weft::runtime>(weft::runtime::builder().workers(2).build());
  weft::runtime* raw = rt.get();
  const auto ops = rt->operations();
  parked bystander;
  auto bystander_handle = rt->worker_scheduler(1).spawn(bystander.factory());
  ASSERT_TRUE(bystander.wait_parked());
  auto h = rt->worker_scheduler(0).spawn([raw]() -> weft::task<int> {
    const weft::stop_outcome out = std::move(*raw).stop();
    co_return out.is_error() && out.error_reason() == weft::stop_error::called_from_worker ? 1 : 0;
  });
  // The stopping task finishes its poll (the worker notices the stop after the turn): it gets
  // its value, nobody deadlocks, and shutdown proceeds without anyone waiting for it.
  auto r = h.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 1);
  EXPECT_TRUE(ops.stop_requested());
  auto b = bystander_handle.join();
  ASSERT_FALSE(b);
  EXPECT_TRUE(b.error().is_cancelled());
  EXPECT_TRUE(weft_test::eventually([&] { return bystander.frame->drops.load() == 1; }, weft_test::generous));
  rt.reset();  // the owner's destructor, on a thread that can wait
}

TEST(shutdown, a_stop_refused_on_a_worker_leaves_the_owner_stop_its_real_outcome) {
  auto rt = weft::runtime::builder().workers(2).build();
  weft::runtime* raw = &rt;
  parked bystander;
  auto bystander_handle = rt.worker_scheduler(1).spawn(bystander.factory());
  ASSERT_TRUE(bystander.wait_parked());
  auto refused = rt.worker_scheduler(0)
                     .spawn([raw]() -> weft::task<weft::stop_outcome> { co_return std::move(*raw).stop(); })
                     .join();
  ASSERT_TRUE(refused);
  ASSERT_TRUE(refused->is_error());
  EXPECT_EQ(refused->error_reason(), weft::stop_error::called_from_worker);
  // The owner, on its own thread, waits and hears what the shutdown did: the bystander was
  // cancelled. The refusal is not repeated.
  const weft::stop_outcome out = std::move(rt).stop();
  EXPECT_FALSE(out.is_error()) << weft::to_string(out);
  ASSERT_TRUE(out.is_incomplete()) << weft::to_string(out);
  EXPECT_EQ(out.counts().tasks_cancelled, 1u);
  EXPECT_TRUE(bystander_handle.join().error().is_cancelled());
  EXPECT_EQ(std::move(rt).stop(), out);  // the stop that waited is the one repeated
}

TEST(shutdown, the_destructor_on_a_worker_does_not_wait) {
  auto holder = std::make_shared<std::unique_ptr<weft::runtime>>(
      std::make_unique<weft::runtime>(weft::runtime::builder().workers(2).build()));
  const auto ops = (*holder)->operations();
  auto sched = (*holder)->worker_scheduler(0);
  flag destroyed;
  auto h = sched.spawn([holder, &destroyed]() -> weft::task<void> {
    holder->reset();  // ~runtime on its own worker: requests the stop, cannot wait
    destroyed.set();
    co_return;
  });
  EXPECT_TRUE(destroyed.wait());
  EXPECT_TRUE(ops.stop_requested());
  (void)h.join();
}

TEST(shutdown, the_destructor_waits_for_workers_and_running_callbacks) {
  flag busy;
  flag release;
  std::atomic<bool> callback_finished{false};
  parked p;
  std::thread releaser;
  {
    auto rt = weft::runtime::builder().workers(2).build();
    auto park = rt.scheduler().spawn(p.factory());
    ASSERT_TRUE(p.wait_parked());
    (void)rt.scheduler().spawn_blocking([&] {
      busy.set();
      EXPECT_TRUE(release.wait());
      callback_finished = true;
    });
    ASSERT_TRUE(busy.wait());
    // Releases the callback only once shutdown visibly began (the parked frame was cancelled).
    releaser = std::thread([&] {
      EXPECT_TRUE(weft_test::eventually([&] { return p.frame->drops.load() == 1; }, weft_test::generous));
      release.set();
    });
  }  // ~runtime
  EXPECT_TRUE(callback_finished.load());
  EXPECT_EQ(p.frame->drops.load(), 1);
  releaser.join();
}

// Several threads submit while another stops: every submission reaches exactly one terminal
// outcome (value, cancelled, rejected); no handle is left unfinished; a rejected factory or
// callback never ran; the stop outcome counts exactly the cancelled tasks.
TEST(shutdown, race_between_submitters_and_stop_loses_nothing) {
  constexpr int submitters = 3;
  constexpr int per_submitter = 300;
  constexpr int total = submitters * per_submitter;
  for (int round = 0; round < 6; ++round) {
    auto rt = weft::runtime::builder()
                  .workers(static_cast<std::size_t>(1 + round % 3))
                  .inbox_capacity(64)
                  .blocking_capacity(2, 8)
                  .build();
    auto never = std::make_shared<weft_test::remote_gate>();
    std::deque<std::atomic<bool>> ran(total);
    std::vector<std::vector<weft::join_handle<int>>> handles(submitters);
    std::atomic<int> submitted{0};
    std::vector<std::thread> threads;
    for (int s = 0; s < submitters; ++s) {
      threads.emplace_back([&, s, sched = rt.scheduler(), w = rt.worker_scheduler(0)]() mutable {
        for (int i = 0; i < per_submitter; ++i) {
          const int k = s * per_submitter + i;
          std::atomic<bool>* flag_k = &ran[static_cast<std::size_t>(k)];
          auto factory = [flag_k, never, k]() -> weft::task<int> {
            flag_k->store(true);
            if (k % 3 == 0) co_await never->wait();  // cancelled at shutdown, if it ran
            if (k % 3 == 1) co_await weft::yield_now();
            co_return k;
          };
          switch (k % 4) {
            case 0: handles[static_cast<std::size_t>(s)].push_back(sched.spawn(factory)); break;
            case 1: handles[static_cast<std::size_t>(s)].push_back(sched.spawn_anywhere(factory)); break;
            case 2: handles[static_cast<std::size_t>(s)].push_back(w.spawn(factory)); break;
            default:
              handles[static_cast<std::size_t>(s)].push_back(sched.spawn_blocking([flag_k, k] {
                flag_k->store(true);
                return k;
              }));
          }
          submitted.fetch_add(1);
        }
      });
    }
    weft::stop_outcome out = weft::stop_outcome::make_complete();
    std::thread stopper([&] {
      while (submitted.load() < total / 3) std::this_thread::yield();
      out = std::move(rt).stop();
    });
    for (auto& t : threads) t.join();
    stopper.join();

    // Everything has stopped: nothing can run any more. Tally.
    int values = 0, cancelled = 0, rejected = 0, unfinished = 0, blocking_full = 0;
    for (int s = 0; s < submitters; ++s) {
      auto& hs = handles[static_cast<std::size_t>(s)];
      ASSERT_EQ(hs.size(), static_cast<std::size_t>(per_submitter));
      for (int i = 0; i < per_submitter; ++i) {
        const int k = s * per_submitter + i;
        auto& h = hs[static_cast<std::size_t>(i)];
        if (!h.is_finished()) {
          ++unfinished;  // stranded: would block join() forever
          continue;
        }
        auto r = h.join();
        const bool did_run = ran[static_cast<std::size_t>(k)].load();
        if (r) {
          ++values;
          EXPECT_EQ(*r, k);
          EXPECT_TRUE(did_run);
        } else if (r.error().is_cancelled()) {
          ++cancelled;
        } else if (r.error().is_rejected()) {
          ++rejected;
          if (k % 4 == 3 && r.error().rejection_reason() == weft::queue_error::full) ++blocking_full;
          EXPECT_FALSE(did_run) << "submission " << k << " was rejected but ran";
        } else {
          ADD_FAILURE() << "submission " << k << " panicked";
        }
      }
    }
    EXPECT_EQ(unfinished, 0);
    EXPECT_EQ(values + cancelled + rejected, total) << "round " << round;
    EXPECT_GT(rejected, 0);  // the stop came while submissions were still going on
    EXPECT_FALSE(out.is_error());
    // Every cancelled handle is a task the stop cancelled. The only other task a stop may cancel
    // is the awaiting task of a spawn_blocking whose pool answered `full` (the handle says
    // rejected; the task is aborted, and the stop may get to it first).
    EXPECT_GE(out.counts().tasks_cancelled, static_cast<std::uint64_t>(cancelled)) << "round " << round;
    EXPECT_LE(out.counts().tasks_cancelled, static_cast<std::uint64_t>(cancelled + blocking_full)) << "round " << round;
  }
}

TEST(shutdown, wakers_schedulers_and_builtins_held_after_shutdown_are_safe_no_ops) {
  auto rt = std::make_unique<weft::runtime>(weft::runtime::builder().workers(2).build());
  struct held {
    weft::waker w;
    weft::builtins b;
  };
  auto gate = std::make_shared<weft_test::remote_gate>();
  auto out = rt->worker_scheduler(1)
                 .spawn([gate]() -> weft::task<held> {
                   // Not `held{co_await ..., ...}`: g++ 12 destroys a co_await result inside a
                   // braced initializer twice.
                   weft::waker w = co_await weft::current_waker();
                   co_return held{std::move(w), weft::builtins::current()};
                 })
                 .join();
  ASSERT_TRUE(out);
  held kept = std::move(*out);
  auto sched = rt->scheduler();
  // A waker of a task that is still alive at shutdown.
  parked p;
  auto ph = rt->scheduler().spawn(p.factory());
  ASSERT_TRUE(p.wait_parked());
  const weft::waker alive_then = p.gate->waiter();

  ASSERT_TRUE(std::move(*rt).stop().is_incomplete());
  // After stop: wakes do nothing, from here and from a foreign thread.
  kept.w.wake();
  alive_then.wake();
  std::thread([&] {
    kept.w.wake();
    alive_then.wake();
  }).join();
  // Schedulers and builtins refuse, their factories never run.
  std::atomic<int> runs{0};
  auto f = [&runs]() -> weft::task<int> {
    runs.fetch_add(1);
    co_return 1;
  };
  for (weft::scheduler* s : {&sched, &kept.b.scheduler()}) {
    auto r = s->spawn(f).join();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().rejection_reason(), weft::queue_error::closed);
  }
  kept.b.operations().request_stop();
  EXPECT_TRUE(kept.b.operations().stop_requested());
  EXPECT_EQ(kept.b.worker().index, 1u);
  (void)kept.b.clock().now();
  // The runtime object itself is gone too: still no-ops.
  rt.reset();
  alive_then.wake();
  kept.w.wake();
  EXPECT_FALSE(sched.spawn(f).join());
  EXPECT_EQ(runs.load(), 0);
  EXPECT_TRUE(ph.join().error().is_cancelled());
}

TEST(shutdown, drain_waits_for_accepted_tasks_and_blocking_work) {
  auto rt = weft::runtime::builder().workers(2).build();
  std::atomic<int> done{0};
  std::vector<weft::join_handle<void>> hs;
  for (int i = 0; i < 10; ++i) {
    hs.push_back(rt.scheduler().spawn_anywhere([&done]() -> weft::task<void> {
      co_await weft::sleep(1ms);
      (void)co_await weft::builtins::current().scheduler().spawn_blocking([] { return 1; });
      done.fetch_add(1);
    }));
  }
  for (int i = 0; i < 3; ++i) hs.push_back(rt.scheduler().spawn_blocking([&done] { done.fetch_add(1); }));
  EXPECT_EQ(rt.drain(), weft::drain_outcome::drained);
  EXPECT_EQ(done.load(), 13);
  for (auto& h : hs) EXPECT_TRUE(h.is_finished());
  // Admission is closed, the runtime is still there.
  auto late = rt.scheduler().spawn([]() -> weft::task<int> { co_return 1; }).join();
  ASSERT_FALSE(late);
  EXPECT_TRUE(late.error().is_rejected());
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(shutdown, drain_with_a_deadline_times_out_without_aborting_anything) {
  auto rt = weft::runtime::builder().workers(2).build();
  parked p;
  auto h = rt.scheduler().spawn(p.factory());
  ASSERT_TRUE(p.wait_parked());
  EXPECT_EQ(rt.drain(5ms), weft::drain_outcome::timed_out);
  EXPECT_EQ(p.frame->drops.load(), 0);  // still alive
  EXPECT_FALSE(h.is_finished());
  p.gate->open_and_wake();  // the task may still finish
  EXPECT_EQ(h.join().value(), 1);
  EXPECT_EQ(rt.drain(5ms), weft::drain_outcome::drained);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(shutdown, drain_on_a_worker_is_a_usage_error) {
  auto rt = weft::runtime::builder().workers(1).build();
  weft::runtime* raw = &rt;
  auto r = rt.scheduler()
               .spawn([raw]() -> weft::task<bool> {
                 try {
                   (void)raw->drain();
                 } catch (const weft::usage_error&) {
                   co_return true;
                 }
                 co_return false;
               })
               .join();
  EXPECT_TRUE(r.value());
}

TEST(shutdown, stop_graceful_finishes_accepted_work_first) {
  auto rt = weft::runtime::builder().workers(2).build();
  std::atomic<int> done{0};
  for (int i = 0; i < 8; ++i) {
    (void)rt.scheduler().spawn_anywhere([&done]() -> weft::task<void> {
      co_await weft::sleep(1ms);
      done.fetch_add(1);
    });
  }
  EXPECT_TRUE(std::move(rt).stop_graceful().is_complete());
  EXPECT_EQ(done.load(), 8);
}

TEST(shutdown, stop_graceful_with_a_deadline_cancels_only_what_did_not_finish) {
  auto rt = weft::runtime::builder().workers(2).build();
  parked p;
  auto stuck = rt.scheduler().spawn(p.factory());
  ASSERT_TRUE(p.wait_parked());
  auto quick = rt.scheduler().spawn([]() -> weft::task<int> {
    co_await weft::sleep(1ms);
    co_return 2;
  });
  const weft::stop_outcome out = std::move(rt).stop_graceful(10ms);
  ASSERT_TRUE(out.is_incomplete());
  EXPECT_EQ(out.counts().tasks_cancelled, 1u);
  EXPECT_EQ(quick.join().value(), 2);
  EXPECT_TRUE(stuck.join().error().is_cancelled());
}

TEST(shutdown, request_stop_from_a_worker_then_stop_from_outside) {
  flag asked;  // before the runtime: the task sets it, and only the runtime's end waits for the task
  auto rt = weft::runtime::builder().workers(2).build();
  auto h = rt.worker_scheduler(1).spawn([&asked]() -> weft::task<bool> {
    weft::builtins::current().operations().request_stop();
    weft::builtins::current().operations().request_stop();  // idempotent
    asked.set();
    co_return weft::builtins::current().operations().stop_requested();
  });
  // stop() may cancel a task that has not run yet: it is called once the task has asked.
  ASSERT_TRUE(asked.wait());
  const weft::stop_outcome out = std::move(rt).stop();
  EXPECT_FALSE(out.is_error());
  auto r = h.join();  // it finished the poll in which it asked: the stop is noticed after the turn
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
}
