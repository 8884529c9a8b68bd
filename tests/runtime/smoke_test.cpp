#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <atomic>
#include <thread>
#include <vector>
using namespace std::chrono_literals;

weft::task<int> answer() { co_await weft::sleep(1ms); co_return 42; }

TEST(smoke, block_on_returns_value) {
  weft::event_loop loop;
  EXPECT_EQ(loop.block_on(answer()), 42);
}

TEST(smoke, spawn_join_and_order) {
  weft::event_loop loop;
  std::vector<int> order;
  auto h = loop.spawn([&]() -> weft::task<int> { order.push_back(1); co_return 7; });
  loop.queue_macrotask([&] { order.push_back(3); });
  loop.queue_microtask([&] { order.push_back(2); });
  int v = loop.block_on([&]() -> weft::task<int> {
    auto r = co_await h;
    co_return r.value();
  }());
  loop.run();
  EXPECT_EQ(v, 7);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(smoke, panic_and_abort) {
  weft::event_loop loop;
  auto p = loop.spawn([]() -> weft::task<int> { throw std::runtime_error("boom"); co_return 1; });
  auto a = loop.spawn([]() -> weft::task<void> { co_await weft::sleep(10s); });
  loop.run_until_stalled();
  a.abort();
  loop.run();
  auto rp = p.join();
  auto ra = a.join();
  ASSERT_FALSE(rp);
  EXPECT_EQ(rp.error(), weft::join_error::panicked);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error(), weft::join_error::cancelled);
}

TEST(smoke, cross_thread_wake) {
  weft::event_loop loop;
  std::atomic<bool> flag{false};
  struct flag_leaf {
    std::atomic<bool>* f;
    std::thread* t;
    bool poll_ready(const weft::waker& w) {
      if (f->load()) return true;
      if (!t->joinable()) *t = std::thread([w, f = f] { std::this_thread::sleep_for(5ms); f->store(true); w.wake(); w.wake(); });
      return false;
    }
    void await_resume() {}
  };
  std::thread th;
  loop.block_on([&]() -> weft::task<void> { co_await flag_leaf{&flag, &th}; }());
  th.join();
  EXPECT_TRUE(flag.load());
}

TEST(smoke, remote_macrotasks_and_close) {
  weft::event_loop loop;
  auto h = loop.handle();
  std::atomic<int> ran{0};
  std::thread t([&] { for (int i = 0; i < 100; ++i) while (!h.queue_macrotask([&] { ran++; })) {} });
  t.join();
  loop.run();
  EXPECT_EQ(ran.load(), 100);
  auto r = h.queue_macrotask([] {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), weft::queue_error::closed);
}

TEST(smoke, spawn_loop_thread) {
  weft::event_loop loop;
  std::atomic<int> x{0};
  loop.spawn_loop_thread([&](weft::event_loop& child) { child.queue_macrotask([&] { x = 5; }); });
  loop.run();
  EXPECT_EQ(x.load(), 5);
}

TEST(smoke, timeout) {
  weft::event_loop loop;
  auto r = loop.block_on([]() -> weft::task<weft::expected<int, weft::timeout_error>> {
    co_return co_await weft::timeout(5ms, []() -> weft::task<int> { co_await weft::sleep(1s); co_return 1; }());
  }());
  ASSERT_FALSE(r);
  auto r2 = loop.block_on([]() -> weft::task<weft::expected<int, weft::timeout_error>> {
    co_return co_await weft::timeout(1s, answer());
  }());
  ASSERT_TRUE(r2);
  EXPECT_EQ(*r2, 42);
}
