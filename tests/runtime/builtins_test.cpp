// tests/runtime/builtins_test.cpp — builtins: present on every worker, a usage_error off them,
// the clock, the telemetry sink.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using namespace std::chrono_literals;

TEST(builtins, current_on_each_worker_names_that_worker) {
  auto rt = weft::runtime::builder().workers(3).build();
  for (std::size_t w = 0; w < 3; ++w) {
    auto r = rt.worker_scheduler(w)
                 .spawn([]() -> weft::task<std::size_t> {
                   weft::builtins& b = weft::builtins::current();
                   if (&b != weft::builtins::try_current()) co_return 99;
                   if (b.scheduler().worker() != std::optional<std::size_t>(b.worker().index)) co_return 98;
                   if (b.operations().stop_requested()) co_return 97;
                   co_return b.worker().index;
                 })
                 .join();
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, w);
  }
}

TEST(builtins, current_off_a_worker_is_a_usage_error) {
  EXPECT_THROW((void)weft::builtins::current(), weft::usage_error);
  EXPECT_EQ(weft::builtins::try_current(), nullptr);
  std::thread([] {
    EXPECT_THROW((void)weft::builtins::current(), weft::usage_error);
    EXPECT_EQ(weft::builtins::try_current(), nullptr);
  }).join();
  // A plain event_loop's tasks are not on a runtime worker either.
  weft::event_loop loop;
  EXPECT_TRUE(loop.block_on([]() -> weft::task<bool> { co_return weft::builtins::try_current() == nullptr; }()));
  // Nor are blocking callbacks.
  auto rt = weft::runtime::builder().workers(1).build();
  auto r = rt.scheduler()
               .spawn_blocking([] {
                 try {
                   (void)weft::builtins::current();
                 } catch (const weft::usage_error&) {
                   return true;
                 }
                 return false;
               })
               .join();
  EXPECT_TRUE(r.value());
}

TEST(builtins, clock_is_monotonic_across_awaits) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto r = rt.scheduler()
               .spawn([]() -> weft::task<int> {
                 const weft::clock& c = weft::builtins::current().clock();
                 int backwards = 0;
                 weft::instant last = c.now();
                 for (int i = 0; i < 50; ++i) {
                   if (i % 2 == 0) {
                     co_await weft::sleep(20us);
                   } else {
                     co_await weft::yield_now();
                   }
                   const weft::instant now = c.now();
                   if (now < last) ++backwards;
                   last = now;
                 }
                 // A sleep lasts at least its duration on this clock.
                 const weft::instant before = c.now();
                 co_await weft::sleep(2ms);
                 if (c.now() - before < 2ms) ++backwards;
                 co_return backwards;
               })
               .join();
  EXPECT_EQ(r.value(), 0);
}

TEST(builtins, telemetry_is_the_configured_sink) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  auto rt = weft::runtime::builder().workers(2).telemetry(sink).build();
  auto hs = rt.scheduler().spawn_everywhere([]() -> weft::task<const weft::telemetry_sink*> {
    co_return &weft::builtins::current().telemetry();
  });
  for (auto& h : hs) EXPECT_EQ(h.join().value(), sink.get());
  // Events of the workers reach it: a throwing macrotask is caught and reported.
  auto r = rt.worker_scheduler(1)
               .spawn([]() -> weft::task<void> {
                 weft::event_loop::current()->queue_macrotask([] { throw std::runtime_error("callback failed"); });
                 co_await weft::sleep(1ms);
               })
               .join();
  EXPECT_TRUE(r);
  EXPECT_TRUE(weft_test::eventually([&] { return sink->count_of(weft::telemetry_kind::callback_panicked) == 1; },
                                    weft_test::generous));
  auto events = sink->events_of(weft::telemetry_kind::callback_panicked);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(weft_test::what_of(events[0].exception), "callback failed");
}

TEST(builtins, default_telemetry_is_a_no_op_sink) {
  auto rt = weft::runtime::builder().workers(1).build();
  auto r = rt.scheduler()
               .spawn([]() -> weft::task<bool> {
                 weft::telemetry_sink& s = weft::builtins::current().telemetry();
                 s.record(weft::telemetry_event{weft::telemetry_kind::callback_panicked, "ignored", 0, {}});
                 co_return &s == weft::noop_telemetry().get();
               })
               .join();
  EXPECT_TRUE(r.value());
}

TEST(builtins, a_copy_used_off_its_worker_keeps_its_runtime_services) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  auto rt = weft::runtime::builder().workers(2).telemetry(sink).build();
  auto copy = rt.worker_scheduler(1).spawn([]() -> weft::task<weft::builtins> { co_return weft::builtins::current(); }).join();
  ASSERT_TRUE(copy);
  weft::builtins b = *copy;
  EXPECT_EQ(b.worker().index, 1u);
  EXPECT_EQ(&b.telemetry(), sink.get());  // off any worker
  auto placed = b.scheduler().spawn([]() -> weft::task<std::size_t> { co_return weft_test::on_worker(); }).join();
  EXPECT_EQ(placed.value(), 1u);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
  EXPECT_EQ(&b.telemetry(), sink.get());  // and after the runtime stopped
}
