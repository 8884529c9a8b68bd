// event_loop_epoll_test.cpp — an event loop whose driver is the epoll backend: its timers fire and
// a remote macrotask wakes it from its wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

#include <sys/socket.h>
#include <unistd.h>

#include <weft/weft.hpp>

using namespace std::chrono_literals;

namespace {

// A read that records its result and then runs `then` (on the loop's thread, inside its turn).
class read_then final : public weft::platform::io_operation {
 public:
  read_then(int on, char* buffer, std::size_t capacity, std::function<void()> then) : then_(std::move(then)) {
    opcode = weft::platform::io_opcode::read;
    fd = on;
    data = buffer;
    size = capacity;
  }
  void complete(std::int64_t r) noexcept override {
    result = r;
    ++completions;
    then_();
  }
  std::int64_t result = 0;
  int completions = 0;

 private:
  std::function<void()> then_;
};

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
  const weft::timer_id far = loop.set_timeout(10s, [&] { timer_fired = true; });
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

// run() keeps going while an operation is in flight and sleeps in epoll; the descriptor's
// readiness ends that sleep. The read's completion clears the far timer, which fires only if
// that wake-up was lost (a later turn would still deliver the read).
TEST(event_loop_epoll, readiness_of_a_parked_read_wakes_the_loop_from_its_wait) {
  weft::event_loop loop(epoll_loop_options());
  auto& driver = loop.shared()->driver;
  int ends[2] = {-1, -1};
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  bool guard_fired = false;
  const weft::timer_id guard = loop.set_timeout(10s, [&] { guard_fired = true; });
  char buffer[8] = {};
  read_then op(ends[0], buffer, sizeof buffer, [&] { (void)loop.clear_timer(guard); });
  driver.submit(op);
  EXPECT_EQ(loop.io_in_flight(), 1u);
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);  // lets the loop go to sleep first (not required)
    ASSERT_EQ(::write(ends[1], "io", 2), 2);
  });
  loop.run();
  writer.join();
  EXPECT_FALSE(guard_fired);
  EXPECT_EQ(op.completions, 1);
  EXPECT_EQ(op.result, 2);
  EXPECT_EQ(loop.io_in_flight(), 0u);
  for (const int end : ends) {
    weft::platform::io_request close;
    close.opcode = weft::platform::io_opcode::close;
    close.fd = end;
    EXPECT_EQ(driver.execute(close), 0);
  }
}
