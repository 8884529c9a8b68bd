// factory_cell_test.cpp — a task spawned from a factory keeps the factory in its cell: the
// factory runs at the first poll on the owner thread, a throwing factory or one that makes no task
// completes the task as panicked, the factory's captures outlive the frame and are destroyed with
// it on the owner thread, and a factory that never runs (aborted, refused) is destroyed unrun.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include <weft/weft.hpp>

#include "support.hpp"

using weft_test::drop_probe;
using weft_test::drop_record;
using weft_test::gate;
using weft_test::gate_leaf;
using weft_test::thread_id;
using weft_test::what_of;

TEST(factory_cell, the_factory_runs_at_the_first_poll_not_at_spawn) {
  weft::event_loop loop;
  int calls = 0;
  auto h = loop.spawn([&calls]() -> weft::task<int> {
    ++calls;
    co_return 7;
  });
  EXPECT_EQ(calls, 0);  // lazily: nothing ran inside spawn()
  loop.run();
  EXPECT_EQ(calls, 1);
  auto r = h.join();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 7);
}

TEST(factory_cell, a_factory_that_throws_completes_the_task_as_panicked) {
  weft::event_loop loop;
  struct throwing_factory {
    weft::task<int> operator()() { throw std::length_error("factory failed"); }
  };
  auto h = loop.spawn(throwing_factory{});
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_EQ(what_of(r.error().exception()), "factory failed");
}

TEST(factory_cell, a_factory_that_throws_operation_cancelled_completes_as_cancelled) {
  weft::event_loop loop;
  struct cancelling_factory {
    weft::task<void> operator()() { throw weft::operation_cancelled(); }
  };
  auto h = loop.spawn(cancelling_factory{});
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::join_error::cancelled);
}

TEST(factory_cell, a_factory_that_returns_an_empty_task_completes_as_panicked_with_a_usage_error) {
  weft::event_loop loop;
  struct empty_factory {
    weft::task<void> operator()() { return weft::task<void>{}; }
  };
  auto h = loop.spawn(empty_factory{});
  loop.run();
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().is_panicked());
  EXPECT_THROW(std::rethrow_exception(r.error().exception()), weft::usage_error);
}

TEST(factory_cell, captures_outlive_the_frame_and_die_with_it_before_the_join) {
  weft::event_loop loop;
  drop_record dropped;
  gate g;
  // The coroutine lambda's frame refers to its captures (probe) across a suspension.
  auto h = loop.spawn([probe = drop_probe(&dropped), &g]() -> weft::task<int> {
    co_await gate_leaf{&g};
    (void)probe;
    co_return 1;
  });
  loop.run_until_stalled();
  EXPECT_EQ(dropped.drops.load(), 0);  // suspended: the captures are alive
  g.open = true;
  g.waiter.wake();
  loop.run_until_stalled();
  EXPECT_TRUE(h.is_finished());
  EXPECT_EQ(dropped.drops.load(), 1);  // completed: the factory went with the frame
  auto r = h.join();
  ASSERT_TRUE(r.has_value());
}

TEST(factory_cell, an_aborted_task_destroys_its_factory_unrun) {
  weft::event_loop loop;
  drop_record dropped;
  bool ran = false;
  auto h = loop.spawn([probe = drop_probe(&dropped), &ran]() -> weft::task<void> {
    ran = true;
    co_return;
  });
  h.abort();
  loop.run();
  EXPECT_FALSE(ran);
  EXPECT_EQ(dropped.drops.load(), 1);
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::join_error::cancelled);
}

TEST(factory_cell, a_runtime_task_destroys_its_factory_on_its_worker) {
  auto rt = weft::runtime::builder().workers(1).build();
  drop_record dropped;
  std::atomic<std::uint64_t> worker{0};
  auto h = rt.scheduler().spawn([probe = drop_probe(&dropped), &worker]() -> weft::task<void> {
    worker.store(thread_id());
    co_return;
  });
  ASSERT_TRUE(h.join().has_value());
  std::move(rt).stop();
  EXPECT_EQ(dropped.drops.load(), 1);
  EXPECT_EQ(dropped.last_thread.load(), worker.load());
  EXPECT_NE(worker.load(), thread_id());
}

TEST(factory_cell, a_refused_factory_is_destroyed_unrun_and_reported_closed) {
  auto rt = weft::runtime::builder().workers(1).build();
  weft::scheduler s = rt.scheduler();
  std::move(rt).stop();
  drop_record dropped;
  bool ran = false;
  auto h = s.spawn([probe = drop_probe(&dropped), &ran]() -> weft::task<void> {
    ran = true;
    co_return;
  });
  auto r = h.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::join_error::rejected);
  EXPECT_EQ(r.error().rejection_reason(), weft::queue_error::closed);
  EXPECT_FALSE(ran);
  EXPECT_EQ(dropped.drops.load(), 1);
}

namespace {
// A factory whose move constructor throws: the spawn throws, and no task is left counted.
struct throwing_move_factory {
  bool armed = true;
  throwing_move_factory() = default;
  throwing_move_factory(const throwing_move_factory&) = delete;
  throwing_move_factory(throwing_move_factory&& other) : armed(other.armed) {
    if (armed) throw std::runtime_error("factory move failed");
  }
  weft::task<void> operator()() { co_return; }
};
}  // namespace

TEST(factory_cell, a_factory_whose_move_throws_makes_spawn_throw_and_leaves_no_task_counted) {
  auto rt = weft::runtime::builder().workers(1).build();
  EXPECT_THROW((void)rt.scheduler().spawn(throwing_move_factory{}), std::runtime_error);
  auto h = rt.scheduler().spawn([]() -> weft::task<int> { co_return 3; });
  EXPECT_EQ(*h.join(), 3);
  // The failed spawn left no task counted: the drain finds the runtime idle (it would otherwise
  // wait out the whole deadline and report it).
  EXPECT_EQ(rt.drain(std::chrono::seconds(5)), weft::drain_outcome::drained);
}
