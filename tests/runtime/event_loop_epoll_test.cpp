// event_loop_epoll_test.cpp — an event loop whose driver is the epoll backend: its timers fire and
// a remote macrotask wakes it from its wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <weft/weft.hpp>

using namespace std::chrono_literals;

namespace {

weft::event_loop::options epoll_loop_options() {
  weft::event_loop::options opts;
  opts.io_driver = weft::io_driver_choice::epoll;
  return opts;
}

}  // namespace

TEST(event_loop_epoll, the_loop_reports_the_epoll_driver) {
  weft::event_loop loop(epoll_loop_options());
  EXPECT_EQ(loop.io_status().backend, weft::io_backend::epoll);
  ASSERT_TRUE(loop.io_status().fallback_reason.has_value());
  EXPECT_EQ(*loop.io_status().fallback_reason, weft::io_unavailable::forced_by_option);
}

TEST(event_loop_epoll, a_timeout_fires_while_the_loop_waits_in_epoll) {
  weft::event_loop loop(epoll_loop_options());
  int fired = 0;
  (void)loop.set_timeout(5ms, [&] { ++fired; });
  loop.run();  // returns only once the timer is no longer armed
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.armed_timers(), 0u);
}

// The loop sleeps in epoll on a far timer; only the remote macrotask's wake (the eventfd) can get
// it out before that timer fires. The macrotask clears the timer, so run() then returns.
TEST(event_loop_epoll, a_remote_macrotask_wakes_the_loop_from_its_wait) {
  weft::event_loop loop(epoll_loop_options());
  bool timer_fired = false;
  const weft::timer_id far = loop.set_timeout(60s, [&] { timer_fired = true; });
  bool remote_ran = false;
  bool cleared = false;
  auto handle = loop.handle();
  std::thread other([&] {
    std::this_thread::sleep_for(20ms);  // lets the loop go to sleep first (not required)
    ASSERT_TRUE(handle.queue_macrotask([&] {
      remote_ran = true;
      cleared = loop.clear_timer(far);
    }));
  });
  loop.run();
  other.join();
  EXPECT_TRUE(remote_ran);
  EXPECT_TRUE(cleared);
  EXPECT_FALSE(timer_fired);
}
