// remote_inbox_test.cpp — the bounded cross-thread inbox: `full` at capacity (at once, never
// blocking, refused work destroyed unrun on the caller's thread), internal wakes bypassing the
// bound, `closed` after run() and after destruction, the first overflow reported once; and the
// inbox's own close commit.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <weft/detail/remote_inbox.hpp>
#include <weft/weft.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using weft_test::drop_probe;
using weft_test::drop_record;
using weft_test::recording_sink;
using weft_test::remote_gate;

namespace {
using steady = std::chrono::steady_clock;
}  // namespace

TEST(remote_inbox, the_default_capacity_is_65536_and_a_zero_capacity_is_a_usage_error) {
  weft::event_loop plain;
  EXPECT_EQ(plain.handle().inbox_capacity(), 65'536u);
  weft::event_loop::options opts;
  opts.inbox_capacity = 0;
  EXPECT_THROW(weft::event_loop{opts}, weft::usage_error);
  opts.inbox_capacity = 1;
  weft::event_loop tiny(opts);
  EXPECT_EQ(tiny.handle().inbox_capacity(), 1u);
}

TEST(remote_inbox, a_full_inbox_refuses_at_once_with_full_for_every_capacity) {
  for (std::size_t capacity : {1u, 2u, 3u, 8u, 64u}) {
    SCOPED_TRACE(capacity);
    weft::event_loop::options opts;
    opts.inbox_capacity = capacity;
    weft::event_loop loop(opts);
    auto handle = loop.handle();
    std::atomic<std::size_t> ran{0};
    std::size_t accepted = 0;
    std::thread producer([&] {
      for (std::size_t i = 0; i < capacity; ++i) {
        if (handle.queue_macrotask([&] { ran.fetch_add(1); })) ++accepted;
      }
      for (int extra = 0; extra < 3; ++extra) {
        const auto start = steady::now();
        auto r = handle.queue_macrotask([&] { ran.fetch_add(1000); });
        EXPECT_LT(steady::now() - start, 1s);  // immediate, never waits for room
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error(), weft::queue_error::full);
      }
    });
    producer.join();
    EXPECT_EQ(accepted, capacity);
    loop.run();
    EXPECT_EQ(ran.load(), capacity);  // every accepted one ran, no refused one did
  }
}

TEST(remote_inbox, draining_the_inbox_makes_room_again) {
  weft::event_loop::options opts;
  opts.inbox_capacity = 2;
  weft::event_loop loop(opts);
  auto handle = loop.handle();
  int ran = 0;
  ASSERT_TRUE(handle.queue_macrotask([&] { ++ran; }));
  ASSERT_TRUE(handle.queue_macrotask([&] { ++ran; }));
  ASSERT_FALSE(handle.queue_macrotask([&] { ++ran; }));
  loop.run_ready_tasks();
  EXPECT_EQ(ran, 2);
  EXPECT_TRUE(handle.queue_macrotask([&] { ++ran; }));
  EXPECT_TRUE(handle.queue_macrotask([&] { ++ran; }));
  loop.run();
  EXPECT_EQ(ran, 4);
}

TEST(remote_inbox, refused_work_is_destroyed_unrun_on_the_submitting_thread_before_the_call_returns) {
  weft::event_loop::options opts;
  opts.inbox_capacity = 1;
  weft::event_loop loop(opts);
  auto handle = loop.handle();
  drop_record refused_full;
  drop_record refused_closed;
  bool ran = false;
  std::uint64_t producer_id = 0;
  std::thread producer([&] {
    producer_id = weft_test::thread_id();
    ASSERT_TRUE(handle.queue_macrotask([] {}));
    auto r = handle.queue_macrotask([&ran, p = drop_probe(&refused_full)] { ran = true; });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(refused_full.drops.load(), 1);  // already destroyed when the call returned
  });
  producer.join();
  EXPECT_EQ(refused_full.last_thread.load(), producer_id);
  loop.run();  // closes the inbox
  std::thread late([&] {
    auto r = handle.queue_macrotask([&ran, p = drop_probe(&refused_closed)] { ran = true; });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), weft::queue_error::closed);
    EXPECT_EQ(refused_closed.drops.load(), 1);
    EXPECT_EQ(refused_closed.last_thread.load(), weft_test::thread_id());
  });
  late.join();
  loop.run();
  EXPECT_FALSE(ran);
}

TEST(remote_inbox, internal_wakes_get_through_a_full_inbox) {
  weft::event_loop::options opts;
  opts.inbox_capacity = 1;
  weft::event_loop loop(opts);
  auto handle = loop.handle();
  remote_gate g;
  auto h = loop.spawn([&]() -> weft::task<int> {
    co_await g.wait();
    co_return 1;
  });
  loop.run_until_stalled();
  ASSERT_TRUE(g.has_waiter());
  int macro_ran = 0;
  std::thread other([&] {
    ASSERT_TRUE(handle.queue_macrotask([&] { ++macro_ran; }));
    auto r = handle.queue_macrotask([&] { ++macro_ran; });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), weft::queue_error::full);
    g.open_and_wake();  // the task wake is internal: not refused although the inbox is full
  });
  other.join();
  loop.run();
  ASSERT_TRUE(h.is_finished());
  EXPECT_EQ(h.join().value(), 1);
  EXPECT_EQ(macro_ran, 1);
}

TEST(remote_inbox, the_inbox_is_closed_after_run_returns) {
  weft::event_loop loop;
  auto handle = loop.handle();
  loop.run();
  bool ran = false;
  auto r = handle.queue_macrotask([&] { ran = true; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::queue_error::closed);
  loop.run();
  EXPECT_FALSE(ran);
}

TEST(remote_inbox, the_inbox_is_closed_after_the_loop_is_destroyed) {
  weft::thread_handle handle;
  {
    weft::event_loop loop;
    handle = loop.handle();
    EXPECT_TRUE(handle.valid());
  }
  drop_record dropped;
  std::thread other([&] {
    auto r = handle.queue_macrotask([p = drop_probe(&dropped)] {});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), weft::queue_error::closed);
  });
  other.join();
  EXPECT_EQ(dropped.drops.load(), 1);
  // Same from the thread that owned the loop.
  auto r = handle.queue_macrotask([] {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::queue_error::closed);
}

TEST(remote_inbox, an_empty_thread_handle_answers_closed) {
  weft::thread_handle handle;
  EXPECT_FALSE(handle.valid());
  EXPECT_EQ(handle.inbox_capacity(), 0u);
  auto r = handle.queue_macrotask([] {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), weft::queue_error::closed);
}

TEST(remote_inbox, copies_of_a_handle_reach_the_same_loop) {
  weft::event_loop loop;
  weft::thread_handle a = loop.handle();
  weft::thread_handle b = a;
  EXPECT_EQ(a, b);
  weft::event_loop other_loop;
  EXPECT_FALSE(a == other_loop.handle());
  int ran = 0;
  ASSERT_TRUE(b.queue_macrotask([&] { ++ran; }));
  loop.run();
  EXPECT_EQ(ran, 1);
}

TEST(remote_inbox, the_first_overflow_is_reported_to_telemetry_exactly_once) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink, 2));
  auto handle = loop.handle();
  ASSERT_TRUE(handle.queue_macrotask([] {}));
  ASSERT_TRUE(handle.queue_macrotask([] {}));
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::inbox_overflow), 0u);
  for (int i = 0; i < 10; ++i) ASSERT_FALSE(handle.queue_macrotask([] {}));
  auto events = sink->events_of(weft::telemetry_kind::inbox_overflow);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 2u);  // the capacity it overflowed
  // Drain and overflow again: still only the first one is reported.
  loop.run_ready_tasks();
  ASSERT_TRUE(handle.queue_macrotask([] {}));
  ASSERT_TRUE(handle.queue_macrotask([] {}));
  ASSERT_FALSE(handle.queue_macrotask([] {}));
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::inbox_overflow), 1u);
  loop.run();
}

TEST(remote_inbox, concurrent_overflows_from_many_threads_report_once) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink, 4));
  auto handle = loop.handle();
  std::atomic<int> full{0};
  std::atomic<int> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto r = handle.queue_macrotask([] {});
        if (r) {
          accepted.fetch_add(1);
        } else {
          EXPECT_EQ(r.error(), weft::queue_error::full);
          full.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 4);
  EXPECT_EQ(full.load(), 196);
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::inbox_overflow), 1u);
  loop.run();
}

TEST(remote_inbox, bursts_from_many_threads_all_reach_a_loop_that_sleeps_between_them) {
  // Only a push into an empty inbox notifies the loop; a push behind others relies on theirs. A
  // notification lost that way would leave run_until asleep with work queued (the test's timeout).
  weft::event_loop loop;
  auto handle = loop.handle();
  constexpr int producers = 4;
  constexpr int rounds = 200;
  constexpr int burst = 16;
  std::atomic<int> ran{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < burst; ++i) {
          if (!handle.queue_macrotask([&] { ran.fetch_add(1, std::memory_order_relaxed); })) refused.fetch_add(1);
        }
        // Long enough, now and then, for the loop to run out of work and go to sleep.
        std::this_thread::sleep_for(std::chrono::microseconds((r + p) % 4 == 0 ? 200 : 5));
      }
    });
  }
  loop.run_until([&] { return ran.load(std::memory_order_relaxed) == producers * rounds * burst; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(refused.load(), 0);
  EXPECT_EQ(ran.load(), producers * rounds * burst);
}

TEST(remote_inbox, a_closed_inbox_is_not_reported_as_an_overflow) {
  auto sink = std::make_shared<recording_sink>();
  weft::event_loop loop(weft_test::with_sink(sink, 1));
  auto handle = loop.handle();
  loop.run();
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(handle.queue_macrotask([] {}));
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::inbox_overflow), 0u);
}

// ---- the inbox itself --------------------------------------------------------------------------------

namespace {
using inbox = weft::detail::remote_inbox;

weft::detail::runnable* make_item(int* counter) {
  auto fn = [counter] { ++*counter; };
  return new weft::detail::callback_runnable<decltype(fn)>(fn);
}

// Pushes that do not look at whether the owner must be notified.
inbox::push_result push_user(inbox& box, weft::detail::runnable* item) {
  bool wake_owner = false;
  return box.push_user(item, &wake_owner);
}
bool push_internal(inbox& box, weft::detail::runnable* item) {
  bool wake_owner = false;
  return box.push_internal(item, &wake_owner);
}

void run_all(weft::detail::runnable_queue& q) {
  while (weft::detail::runnable* r = q.pop_front()) r->run();
}
}  // namespace

TEST(remote_inbox_unit, user_items_are_bounded_and_internal_items_are_not) {
  inbox box(2);
  int ran = 0;
  weft::detail::runnable* items[5] = {make_item(&ran), make_item(&ran), make_item(&ran), make_item(&ran),
                                      make_item(&ran)};
  EXPECT_EQ(push_user(box, items[0]), inbox::push_result::accepted);
  EXPECT_EQ(push_user(box, items[1]), inbox::push_result::accepted);
  EXPECT_EQ(push_user(box, items[2]), inbox::push_result::full);  // still ours
  EXPECT_TRUE(push_internal(box, items[3]));
  EXPECT_TRUE(push_internal(box, items[4]));  // past the bound: internal items are not counted
  items[2]->discard();
  EXPECT_TRUE(box.has_pending());
  weft::detail::runnable_queue out;
  box.drain_into(out);
  EXPECT_EQ(out.size(), 4u);
  EXPECT_FALSE(box.has_pending());
  run_all(out);
  EXPECT_EQ(ran, 4);
}

TEST(remote_inbox_unit, only_a_push_into_an_empty_queue_asks_for_a_notification) {
  inbox box(4);
  int ran = 0;
  bool wake_owner = false;
  ASSERT_EQ(box.push_user(make_item(&ran), &wake_owner), inbox::push_result::accepted);
  EXPECT_TRUE(wake_owner);
  ASSERT_EQ(box.push_user(make_item(&ran), &wake_owner), inbox::push_result::accepted);
  EXPECT_FALSE(wake_owner);  // behind the first: its notification covers this one
  ASSERT_TRUE(box.push_internal(make_item(&ran), &wake_owner));
  EXPECT_TRUE(wake_owner);  // wakes are a queue of their own
  ASSERT_TRUE(box.push_internal(make_item(&ran), &wake_owner));
  EXPECT_FALSE(wake_owner);
  weft::detail::runnable_queue out;
  box.drain_into(out);
  EXPECT_EQ(out.size(), 4u);
  run_all(out);
  // Drained: the next push of either kind finds its queue empty again.
  ASSERT_EQ(box.push_user(make_item(&ran), &wake_owner), inbox::push_result::accepted);
  EXPECT_TRUE(wake_owner);
  ASSERT_TRUE(box.push_internal(make_item(&ran), &wake_owner));
  EXPECT_TRUE(wake_owner);
  box.drain_into(out);
  run_all(out);
  EXPECT_EQ(ran, 6);
}

TEST(remote_inbox_unit, the_close_commit_fails_while_anything_is_queued) {
  inbox box(4);
  int ran = 0;
  ASSERT_TRUE(push_internal(box, make_item(&ran)));
  EXPECT_FALSE(box.try_close());  // work arrived: the loop must go on
  EXPECT_FALSE(box.is_closed());
  weft::detail::runnable_queue out;
  box.drain_into(out);
  run_all(out);
  EXPECT_TRUE(box.try_close());
  EXPECT_TRUE(box.is_closed());
}

TEST(remote_inbox_unit, a_closed_inbox_refuses_user_items_but_takes_internal_ones) {
  inbox box(4);
  int ran = 0;
  ASSERT_TRUE(box.try_close());
  weft::detail::runnable* user = make_item(&ran);
  EXPECT_EQ(push_user(box, user), inbox::push_result::closed);
  user->discard();
  EXPECT_TRUE(push_internal(box, make_item(&ran)));
  box.reopen();
  EXPECT_FALSE(box.is_closed());
  EXPECT_EQ(push_user(box, make_item(&ran)), inbox::push_result::accepted);
  weft::detail::runnable_queue out;
  box.drain_into(out);
  run_all(out);
  EXPECT_EQ(ran, 2);
}

TEST(remote_inbox_unit, a_killed_inbox_hands_back_its_items_and_refuses_everything_for_good) {
  inbox box(4);
  int ran = 0;
  ASSERT_EQ(push_user(box, make_item(&ran)), inbox::push_result::accepted);
  ASSERT_TRUE(push_internal(box, make_item(&ran)));
  weft::detail::runnable_queue left = box.kill();
  EXPECT_EQ(left.size(), 2u);
  EXPECT_FALSE(box.has_pending());
  left.discard_all();
  weft::detail::runnable* user = make_item(&ran);
  weft::detail::runnable* internal = make_item(&ran);
  EXPECT_EQ(push_user(box, user), inbox::push_result::closed);
  EXPECT_FALSE(push_internal(box, internal));
  box.reopen();  // a dead inbox stays closed
  EXPECT_TRUE(box.is_closed());
  EXPECT_EQ(push_user(box, user), inbox::push_result::closed);
  user->discard();
  internal->discard();
  EXPECT_EQ(ran, 0);
}

TEST(remote_inbox_unit, a_push_racing_the_close_is_either_accepted_before_it_or_refused) {
  // Many rounds of: one thread pushes user items while the owner alternates drain / try_close.
  // Every accepted item must be drained (never stranded behind a successful close).
  for (int round = 0; round < 200; ++round) {
    inbox box(1'000);
    std::atomic<bool> go{false};
    int ran = 0;  // touched only by the owner (items run here)
    std::atomic<int> accepted{0};
    std::thread producer([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < 50; ++i) {
        weft::detail::runnable* item = make_item(&ran);
        if (push_user(box, item) == inbox::push_result::accepted) {
          accepted.fetch_add(1, std::memory_order_relaxed);
        } else {
          item->discard();
          break;  // closed for good in this round
        }
      }
    });
    go.store(true, std::memory_order_release);
    for (;;) {
      weft::detail::runnable_queue out;
      box.drain_into(out);
      run_all(out);
      if (box.try_close()) break;
    }
    producer.join();
    ASSERT_EQ(ran, accepted.load()) << "round " << round;
  }
}
