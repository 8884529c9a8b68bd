// runtime_io_test.cpp — I/O on the pinned runtime's workers: each worker's loop owns the objects
// its tasks make, and stopping the runtime with operations in flight on every worker cancels and
// reaps them all (no descriptor outlives the runtime, no stop hangs).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/runtime.hpp>
#include <weft/time.hpp>

#include "io_test_support.hpp"

namespace weft {
namespace {

class runtime_io : public ::testing::TestWithParam<io_driver_choice> {
 protected:
  // A 2-worker runtime on the driver the instance asks for; io_uring where the kernel lacks it is
  // a visible skip.
  std::unique_ptr<runtime> build() {
    try {
      return std::make_unique<runtime>(runtime::builder().workers(2).io_driver(GetParam()).build());
    } catch (const io_unavailable_error&) {
      return nullptr;
    }
  }
};

// On each worker: a listener waiting in accept, a connected pair whose server side waits in a
// read, and a child process waited for on its pidfd. Every one of them is still in flight when
// the runtime stops.
task<void> park_io_here(std::shared_ptr<std::atomic<int>> parked) {
  auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
  if (!listener) co_return;
  auto client = co_await tcp_stream::connect(*listener->local_address());
  if (!client) co_return;
  auto server = co_await listener->accept();
  if (!server) co_return;
  auto sleeper = child_process::spawn({"sleep", "30"});
  if (!sleeper) co_return;
  auto accepting = spawn([&l = *listener]() -> task<void> { (void)co_await l.accept(); });
  auto reading = spawn([&s = *server]() -> task<void> {
    std::byte buf[64];
    (void)co_await s.read(buf);
  });
  auto waiting = spawn([&c = *sleeper]() -> task<void> { (void)co_await c.wait(); });
  parked->fetch_add(1);
  // Never finish: the stop cancels this task and the three above.
  (void)co_await accepting;
  (void)co_await reading;
  (void)co_await waiting;
}

TEST_P(runtime_io, stopping_with_operations_in_flight_on_every_worker_leaks_no_descriptor) {
  if (!build()) GTEST_SKIP() << "io_uring unavailable on this machine";
  const std::size_t before = io_test::open_fds();
  // The host side runs on a thread of its own, which is gone before the count: whatever a thread
  // keeps for its lifetime is the two tests below, not this one.
  std::thread host([this] {
    auto rt = build();
    ASSERT_TRUE(rt);
    auto parked = std::make_shared<std::atomic<int>>(0);
    std::vector<join_handle<void>> parkers;
    for (std::size_t w = 0; w < rt->worker_count(); ++w) {
      parkers.push_back(rt->worker_scheduler(w).spawn([parked] { return park_io_here(parked); }));
    }
    // Until every worker has its operations in flight (bounded: a defect fails, it does not hang).
    for (int i = 0; i < 10'000 && parked->load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(parked->load(), 2) << "the workers never got their operations in flight";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the last submissions reach the kernel
    const stop_outcome out = std::move(*rt).stop();
    EXPECT_EQ(out, stop_outcome::incomplete) << to_string(out);
    EXPECT_GE(out.counts().tasks_cancelled, 8u) << to_string(out);  // 4 per worker, at least
    for (auto& h : parkers) {
      auto r = h.join();
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().get_kind(), join_error::cancelled);
    }
  });
  host.join();
  EXPECT_EQ(io_test::open_fds(), before) << "a descriptor outlived the runtime";
}

// Sleeps long enough for the worker to leave its spin and block in the kernel, so the spawn's
// wake goes through the driver (a MSG_RING or an eventfd write), then spawns and awaits a task.
task<void> wake_a_sleeping_worker(runtime& rt, int times) {
  for (int i = 0; i < times; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto h = rt.worker_scheduler(0).spawn([]() -> task<int> { co_return 1; });
    (void)co_await h;
  }
}

// Runs `body` on a thread of its own and answers how many more descriptors that thread's process
// held after the body than before it, counted on that thread while it still lives: what a thread
// keeps for its lifetime is what the tests below are about.
template <class Body>
long descriptors_kept_by_a_thread(Body body) {
  long kept = 0;
  std::thread t([&] {
    const std::size_t before = io_test::open_fds();
    body();
    kept = static_cast<long>(io_test::open_fds()) - static_cast<long>(before);
  });
  t.join();
  return kept;
}

// A host thread that spawns onto workers and joins them holds no descriptor afterwards: the
// wakes it sends to sleeping workers leave nothing open on its side once the runtime is gone.
TEST_P(runtime_io, a_host_thread_that_woke_workers_holds_no_descriptor_after_the_runtime) {
  if (!build()) GTEST_SKIP() << "io_uring unavailable on this machine";
  const long kept = descriptors_kept_by_a_thread([this] {
    auto rt = build();
    ASSERT_TRUE(rt);
    for (int i = 0; i < 5; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ASSERT_TRUE(rt->worker_scheduler(0).spawn([]() -> task<int> { co_return 1; }).join());
    }
  });
  EXPECT_EQ(kept, 0) << "the host thread kept a descriptor of the runtime's";
}

// A thread whose own loop woke a runtime's workers holds no descriptor once that loop and the
// runtime are gone.
TEST_P(runtime_io, a_loop_thread_that_woke_workers_holds_no_descriptor_after_its_loop) {
  if (!build()) GTEST_SKIP() << "io_uring unavailable on this machine";
  const long kept = descriptors_kept_by_a_thread([this] {
    auto rt = build();
    ASSERT_TRUE(rt);
    event_loop loop(io_test::options_for(GetParam()));
    loop.block_on(wake_a_sleeping_worker(*rt, 5));
  });
  EXPECT_EQ(kept, 0) << "the loop's thread kept a descriptor after its loop was destroyed";
}

INSTANTIATE_TEST_SUITE_P(drivers, runtime_io, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                         io_test::driver_name);

}  // namespace
}  // namespace weft
