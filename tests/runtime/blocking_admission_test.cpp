// tests/runtime/blocking_admission_test.cpp — the blocking pool's admission when a pool thread
// cannot be started: the job waits for an existing thread only while max_queued allows.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <system_error>
#include <vector>

#include <weft/detail/blocking_admission.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/platform/thread.hpp>

namespace {

struct counted_job final : weft::detail::runnable {
  explicit counted_job(std::atomic<int>& ran, std::atomic<int>& discarded)
      : runnable(weft::detail::runnable_kind::callback), ran_(ran), discarded_(discarded) {}
  void run() override {
    ++ran_;
    delete this;
  }
  void discard() noexcept override {
    ++discarded_;
    delete this;
  }
  std::atomic<int>& ran_;
  std::atomic<int>& discarded_;
};

}  // namespace

TEST(blocking_admission, a_failed_thread_start_queues_the_job_only_within_max_queued) {
  weft::detail::blocking_admission admission(/*max_threads=*/2, /*max_queued=*/1);
  std::atomic<int> ran{0};
  std::atomic<int> discarded{0};
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();

  // The first job starts the pool's one thread, which waits for `go` before it serves: it stays
  // a starting thread, the one taker of the queue.
  auto start_one = [&](std::vector<weft::platform::thread>& threads) {
    threads.emplace_back([&admission, started] {
      started.wait();
      admission.serve();
    });
  };
  auto cannot_start = [](std::vector<weft::platform::thread>&) {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
  };
  ASSERT_TRUE(admission.submit(new counted_job(ran, discarded), start_one));
  // No thread can be added: the next job waits for the existing one (max_queued is 1) ...
  ASSERT_TRUE(admission.submit(new counted_job(ran, discarded), cannot_start));
  EXPECT_EQ(admission.waiting(), 1u);
  // ... and one more would be the second waiting job: refused `full`, destroyed unrun.
  const auto over = admission.submit(new counted_job(ran, discarded), cannot_start);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error(), weft::queue_error::full);
  EXPECT_EQ(discarded.load(), 1);
  EXPECT_EQ(admission.waiting(), 1u);

  go.set_value();
  while (ran.load() < 2) weft::platform::yield_thread();
  EXPECT_EQ(admission.close(), 0u);
  for (auto& t : admission.take_threads()) t.join();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(discarded.load(), 1);
}
