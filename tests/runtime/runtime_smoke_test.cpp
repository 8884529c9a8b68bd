#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <atomic>
#include <thread>
#include <vector>
using namespace std::chrono_literals;

TEST(runtime_smoke, spawn_anywhere_and_everywhere) {
  auto rt = weft::runtime::builder().workers(3).build();
  auto h = rt.scheduler().spawn_anywhere([]() -> weft::task<int> {
    auto& b = weft::builtins::current();
    auto cfg = co_await b.scheduler().spawn_blocking([] { return 41; });
    co_return cfg.value() + 1;
  });
  auto r = h.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 42);
  auto all = rt.scheduler().spawn_everywhere([]() -> weft::task<std::size_t> {
    co_await weft::sleep(1ms);
    co_return weft::builtins::current().worker().index;
  });
  ASSERT_EQ(all.size(), 3u);
  std::vector<std::size_t> seen;
  for (auto& a : all) seen.push_back(a.join().value());
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2}));
  auto out = std::move(rt).stop();
  EXPECT_TRUE(out.is_complete());
}

TEST(runtime_smoke, stop_cancels_and_rejects) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto sched = rt.scheduler();
  auto h = sched.spawn([]() -> weft::task<void> { co_await weft::sleep(10s); });
  std::this_thread::sleep_for(5ms);
  auto out = std::move(rt).stop();
  EXPECT_TRUE(out.is_incomplete());
  EXPECT_EQ(out.counts().tasks_cancelled, 1u);
  auto r = h.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), weft::join_error::cancelled);
  bool ran = false;
  auto late = sched.spawn([&]() -> weft::task<void> { ran = true; co_return; });
  auto lr = late.join();
  ASSERT_FALSE(lr);
  EXPECT_EQ(lr.error(), weft::join_error::rejected);
  EXPECT_FALSE(ran);
}

TEST(runtime_smoke, stop_from_worker_is_error) {
  auto rt = std::make_unique<weft::runtime>(weft::runtime::builder().workers(1).build());
  weft::runtime* raw = rt.get();
  auto h = rt->scheduler().spawn([raw]() -> weft::task<int> {
    auto out = std::move(*raw).stop();
    co_return out.is_error() && out.error_reason() == weft::stop_error::called_from_worker ? 1 : 0;
  });
  auto r = h.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 1);
  rt.reset();
}

TEST(runtime_smoke, block_on_borrows) {
  auto rt = weft::runtime::builder().workers(2).build();
  int local = 5;
  int v = rt.block_on([&]() -> weft::task<int> { co_await weft::sleep(1ms); co_return local * 2; });
  EXPECT_EQ(v, 10);
}

TEST(runtime_smoke, local_domain) {
  weft::local_domain ui;
  auto sp = ui.spawner();
  std::atomic<int> hits{0};
  std::thread t([&] {
    EXPECT_TRUE(sp.dispatch([&] { hits++; }));
    EXPECT_TRUE(sp.dispatch_future([&]() -> weft::task<void> { hits++; co_return; }));
  });
  t.join();
  EXPECT_EQ(ui.run_n(0), 0u);
  auto st = ui.run_for(100ms);
  EXPECT_EQ(hits.load(), 2);
  EXPECT_GE(st.inbox_commands, 2u);
}

TEST(runtime_smoke, drain) {
  auto rt = weft::runtime::builder().workers(2).build();
  std::atomic<int> done{0};
  for (int i = 0; i < 10; ++i)
    (void)rt.scheduler().spawn([&]() -> weft::task<void> { co_await weft::sleep(2ms); done++; });
  EXPECT_EQ(rt.drain(), weft::drain_outcome::drained);
  EXPECT_EQ(done.load(), 10);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}
