// tests/runtime/runtime_test.cpp — weft::runtime: the builder's options and their ranges,
// startup readiness, start_error, block_on, and what a stopped or moved-from runtime answers.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using namespace std::chrono_literals;
using weft_test::flag;

namespace {

weft::task<std::size_t> report_worker() { co_return weft_test::on_worker(); }

}  // namespace

TEST(runtime_builder, workers_sets_the_worker_count) {
  for (std::size_t n : {1u, 2u, 5u}) {
    auto rt = weft::runtime::builder().workers(n).build();
    EXPECT_EQ(rt.worker_count(), n);
    EXPECT_EQ(rt.scheduler().worker_count(), n);
    EXPECT_TRUE(std::move(rt).stop().is_complete());
  }
}

TEST(runtime_builder, default_worker_count_is_the_available_cores) {
  auto rt = weft::runtime::builder().build();
  EXPECT_EQ(rt.worker_count(), weft::platform::hardware_concurrency());
  EXPECT_GE(rt.worker_count(), 1u);
}

TEST(runtime_builder, build_returns_with_every_worker_accepting_work) {
  // Repeated, because a readiness bug would show as a rare refusal or a missing builtins right
  // after build(). Every worker must take a task at once and run it with its own builtins.
  for (int round = 0; round < 20; ++round) {
    auto rt = weft::runtime::builder().workers(3).build();
    std::vector<weft::join_handle<std::size_t>> handles;
    for (std::size_t i = 0; i < rt.worker_count(); ++i) {
      handles.push_back(rt.worker_scheduler(i).spawn([] { return report_worker(); }));
    }
    for (std::size_t i = 0; i < handles.size(); ++i) {
      auto r = handles[i].join();
      ASSERT_TRUE(r) << "round " << round << " worker " << i << ": " << weft::to_string(r.error().get_kind());
      EXPECT_EQ(*r, i);
    }
    EXPECT_TRUE(std::move(rt).stop().is_complete());
  }
}

TEST(runtime_builder, worker_scheduler_rejects_an_index_out_of_range) {
  auto rt = weft::runtime::builder().workers(2).build();
  const std::string what = weft_test::usage_error_message([&] { (void)rt.worker_scheduler(2); });
  EXPECT_NE(what.find("worker_scheduler(2): no such worker; the runtime has 2"), std::string::npos) << what;
}

TEST(runtime_builder, zero_workers_is_a_usage_error_naming_the_value_and_the_range) {
  const std::string what = weft_test::usage_error_message([] { (void)weft::runtime::builder().workers(0).build(); });
  EXPECT_NE(what.find("workers(0) is out of range; accepted: 1 to 8192"), std::string::npos) << what;
}

TEST(runtime_builder, more_workers_than_the_maximum_is_a_usage_error) {
  static_assert(weft::runtime::builder::workers_max == 8'192);
  const std::string what = weft_test::usage_error_message(
      [] { (void)weft::runtime::builder().workers(weft::runtime::builder::workers_max + 1).build(); });
  EXPECT_NE(what.find("workers(8193) is out of range; accepted: 1 to 8192"), std::string::npos) << what;
  // A wrapped negative count is refused the same way, before any thread starts.
  const std::string wrapped = weft_test::usage_error_message([] { (void)weft::runtime::builder().workers(static_cast<std::size_t>(-1)).build(); });
  EXPECT_NE(wrapped.find("is out of range"), std::string::npos) << wrapped;
}

TEST(runtime_builder, zero_capacities_are_usage_errors_naming_the_knob_and_the_values) {
  const std::string inbox = weft_test::usage_error_message([] { (void)weft::runtime::builder().inbox_capacity(0).build(); });
  EXPECT_NE(inbox.find("inbox_capacity(0) is out of range; accepted: at least 1"), std::string::npos) << inbox;
  const std::string threads =
      weft_test::usage_error_message([] { (void)weft::runtime::builder().blocking_capacity(0, 5).build(); });
  EXPECT_NE(threads.find("blocking_capacity(0, 5) is out of range"), std::string::npos) << threads;
  const std::string queued =
      weft_test::usage_error_message([] { (void)weft::runtime::builder().blocking_capacity(3, 0).build(); });
  EXPECT_NE(queued.find("blocking_capacity(3, 0) is out of range"), std::string::npos) << queued;
}

TEST(runtime_builder, one_builder_builds_independent_runtimes) {
  const auto b = weft::runtime::builder().workers(2);
  auto first = b.build();
  auto second = b.build();
  EXPECT_EQ(first.worker_count(), 2u);
  EXPECT_EQ(second.worker_count(), 2u);
  EXPECT_TRUE(std::move(first).stop().is_complete());
  // Stopping one leaves the other running.
  EXPECT_FALSE(second.stop_requested());
  EXPECT_LT(second.block_on([] { return report_worker(); }), 2u);
  EXPECT_TRUE(std::move(second).stop().is_complete());
}

TEST(runtime_builder, inbox_capacity_bounds_each_worker_inbox) {
  auto sink = std::make_shared<weft_test::recording_sink>();
  auto rt = weft::runtime::builder().workers(1).inbox_capacity(1).telemetry(sink).build();
  auto sched = rt.worker_scheduler(0);

  // Hold the only worker inside a poll, so nothing leaves its inbox.
  flag busy;
  flag release;
  auto blocker = sched.spawn([&]() -> weft::task<void> {
    busy.set();
    EXPECT_TRUE(release.wait());  // blocks the worker thread on purpose
    co_return;
  });
  ASSERT_TRUE(busy.wait());

  std::atomic<int> factories_run{0};
  auto make = [&factories_run]() -> weft::task<int> {
    factories_run.fetch_add(1);
    co_return 7;
  };
  auto accepted = sched.spawn(make);
  auto refused = sched.spawn(make);
  ASSERT_TRUE(refused.is_finished());
  auto refusal = refused.join();
  ASSERT_FALSE(refusal);
  EXPECT_TRUE(refusal.error().is_rejected());
  EXPECT_EQ(refusal.error().rejection_reason(), weft::queue_error::full);
  EXPECT_FALSE(accepted.is_finished());

  release.set();
  auto r = accepted.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 7);
  EXPECT_TRUE(blocker.join());
  EXPECT_EQ(factories_run.load(), 1);  // the refused factory never ran
  EXPECT_EQ(sink->count_of(weft::telemetry_kind::inbox_overflow), 1u);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
namespace {
// The child of the start_error test: exits 0 when build() threw start_error as promised.
[[noreturn]] void build_under_address_space_limit() {
  long pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  if (pages <= 0) _exit(10);
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (48u << 20);
  const rlimit lim{limit, limit};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(11);
  try {
    auto rt = weft::runtime::builder().workers(256).blocking_capacity(1, 1).build();
    _exit(12);  // every thread started: the limit did not bite
  } catch (const weft::start_error& e) {
    // Some workers started before the failure; build() joined them before throwing.
    _exit(e.worker() > 0 && e.worker() < 256 ? 0 : 13);
  } catch (...) {
    _exit(14);
  }
}
}  // namespace
#endif

// The OS refusing a thread is provoked for real: in a death-test child process, the address-space limit is
// set just above what the process already maps, so the first few 8 MiB worker stacks fit and a
// later pthread_create fails with EAGAIN. Sanitizer runtimes reserve terabytes of shadow memory,
// so there the limit cannot be applied and the test reports skipped.
TEST(runtime_builder, failure_to_start_a_worker_is_start_error_after_stopping_the_started_ones) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit cannot be combined with sanitizer shadow memory";
#else
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh child process, whatever ran before
  EXPECT_EXIT(build_under_address_space_limit(), ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
#endif
}

TEST(runtime_block_on, returns_the_value_and_may_borrow_the_callers_locals) {
  auto rt = weft::runtime::builder().workers(2).build();
  std::vector<int> borrowed{1, 2, 3};
  weft_test::drop_record frame;
  const int sum = rt.block_on([&]() -> weft::task<int> {
    weft_test::drop_probe probe(&frame);
    co_await weft::sleep(100us);
    int s = 0;
    for (int v : borrowed) s += v;
    co_return s;
  });
  EXPECT_EQ(sum, 6);
  // The borrowing frame is gone before block_on returned.
  EXPECT_EQ(frame.drops.load(), 1);
}

TEST(runtime_block_on, rethrows_what_the_task_threw_after_destroying_its_frame) {
  auto rt = weft::runtime::builder().workers(1).build();
  weft_test::drop_record frame;
  try {
    rt.block_on([&]() -> weft::task<void> {
      weft_test::drop_probe probe(&frame);
      co_await weft::yield_now();
      throw std::runtime_error("boom");
    });
    FAIL() << "block_on did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
    EXPECT_EQ(frame.drops.load(), 1);
  }
}

TEST(runtime_block_on, on_a_worker_is_a_usage_error) {
  auto rt = weft::runtime::builder().workers(1).build();
  weft::runtime* raw = &rt;
  auto h = rt.scheduler().spawn([raw]() -> weft::task<bool> {
    try {
      (void)raw->block_on([]() -> weft::task<int> { co_return 1; });
    } catch (const weft::usage_error&) {
      co_return true;
    }
    co_return false;
  });
  auto r = h.join();
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
}

TEST(runtime_lifecycle, calls_after_stop_say_the_runtime_is_stopped) {
  auto rt = weft::runtime::builder().workers(2).build();
  const weft::stop_outcome out = std::move(rt).stop();
  ASSERT_TRUE(out.is_complete());
  const std::string block_on =
      weft_test::usage_error_message([&] { (void)rt.block_on([]() -> weft::task<int> { co_return 1; }); });
  EXPECT_NE(block_on.find("runtime::block_on on a stopped runtime"), std::string::npos) << block_on;
  const std::string drain = weft_test::usage_error_message([&] { (void)rt.drain(); });
  EXPECT_NE(drain.find("runtime::drain on a stopped runtime"), std::string::npos) << drain;
  // It still answers for the runtime it was: stopped, two workers, schedulers that refuse.
  EXPECT_TRUE(rt.stop_requested());
  EXPECT_TRUE(rt.operations().stop_requested());
  EXPECT_EQ(rt.worker_count(), 2u);
  for (weft::scheduler s : {rt.scheduler(), rt.worker_scheduler(1)}) {
    auto r = s.spawn([] { return report_worker(); }).join();
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_rejected());
    EXPECT_EQ(r.error().rejection_reason(), weft::queue_error::closed);
  }
  EXPECT_EQ(std::move(rt).stop(), out);
  EXPECT_EQ(std::move(rt).stop_graceful(), out);
}

TEST(runtime_lifecycle, calls_on_a_moved_from_runtime_say_it_was_moved_from) {
  auto rt = weft::runtime::builder().workers(1).build();
  auto owner = std::move(rt);
  const std::string block_on =
      weft_test::usage_error_message([&] { (void)rt.block_on([]() -> weft::task<int> { co_return 1; }); });
  EXPECT_NE(block_on.find("runtime::block_on on a moved-from runtime"), std::string::npos) << block_on;
  const std::string drain = weft_test::usage_error_message([&] { (void)rt.drain(); });
  EXPECT_NE(drain.find("runtime::drain on a moved-from runtime"), std::string::npos) << drain;
  const std::string sched = weft_test::usage_error_message([&] { (void)rt.worker_scheduler(0); });
  EXPECT_NE(sched.find("runtime::worker_scheduler on a moved-from runtime"), std::string::npos) << sched;
  const std::string cpu = weft_test::usage_error_message([&] { (void)rt.worker_cpu(0); });
  EXPECT_NE(cpu.find("runtime::worker_cpu on a moved-from runtime"), std::string::npos) << cpu;
  EXPECT_EQ(rt.worker_count(), 0u);
  EXPECT_FALSE(rt.stop_requested());
  EXPECT_EQ(owner.block_on([] { return report_worker(); }), 0u);  // the runtime lives on in `owner`
  EXPECT_TRUE(std::move(owner).stop().is_complete());
}

TEST(runtime_lifecycle, moving_a_stopped_runtime_moves_the_stopped_state) {
  auto rt = weft::runtime::builder().workers(1).build();
  ASSERT_TRUE(std::move(rt).stop().is_complete());
  auto later = std::move(rt);
  const std::string at_source =
      weft_test::usage_error_message([&] { (void)rt.block_on([]() -> weft::task<int> { co_return 1; }); });
  EXPECT_NE(at_source.find("moved-from runtime"), std::string::npos) << at_source;
  const std::string at_target =
      weft_test::usage_error_message([&] { (void)later.block_on([]() -> weft::task<int> { co_return 1; }); });
  EXPECT_NE(at_target.find("stopped runtime"), std::string::npos) << at_target;
  EXPECT_TRUE(std::move(later).stop().is_complete());
}

TEST(runtime_builder, move_assignment_stops_the_replaced_runtime) {
  auto first = weft::runtime::builder().workers(1).build();
  auto old_sched = first.scheduler();
  first = weft::runtime::builder().workers(2).build();
  EXPECT_EQ(first.worker_count(), 2u);
  auto refused = old_sched.spawn([] { return report_worker(); }).join();
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().is_rejected());
  auto ok = first.scheduler().spawn([] { return report_worker(); }).join();
  EXPECT_TRUE(ok);
}
