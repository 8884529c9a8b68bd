// wake_reaping_test.cpp — a cross-thread wake leaves nothing behind in the driver.
//
// A wake from another thread is a completion of the driver's own (a MSG_RING or eventfd read on
// io_uring). The loop must reap it even with no I/O in flight: one left in the queue would end
// every later wait at once, and an idle loop would spin instead of sleeping.
#include <thread>

#include <gtest/gtest.h>

#include "io_test_support.hpp"

namespace weft {
namespace {

class wake_reaping : public io_test::on_each_driver {};

TEST_P(wake_reaping, wakes_from_another_thread_leave_no_completion_behind) {
  constexpr int wakes = 50;
  int ran = 0;
  thread_handle h = loop().handle();
  std::thread other([&h, &ran] {
    for (int i = 0; i < wakes; ++i) {
      while (!h.queue_macrotask([&ran] { ++ran; })) std::this_thread::yield();
      // Long enough for the loop to go to sleep in the driver between two wakes.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  loop().run_until([&ran] { return ran == wakes; });
  other.join();
  loop().run_until_stalled();
  EXPECT_EQ(ran, wakes);
  EXPECT_FALSE(loop().shared()->driver.has_completions()) << "a wake's completion was never reaped";
}

INSTANTIATE_TEST_SUITE_P(drivers, wake_reaping, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                         io_test::driver_name);

}  // namespace
}  // namespace weft
