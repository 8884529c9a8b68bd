// tests/runtime/pinning_test.cpp — runtime::builder().pin_workers(): each worker thread runs on
// exactly one CPU, the i-th of those the building thread may use (modulo their number), and
// runtime::worker_cpu() reports it. Checked against the OS on the worker itself (its affinity
// mask, and sched_getcpu), so these tests need the real flavor's threads.
#include <gtest/gtest.h>

#include <sched.h>

#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

namespace {

// The calling thread's affinity mask (sched_getaffinity, through the real flavor's seam).
std::vector<unsigned> cpus_of_this_thread() { return weft::platform::allowed_cpus(); }

// What a worker sees of its own placement: its affinity mask and the CPU it is running on.
struct placement {
  std::vector<unsigned> allowed;
  int running_on = -1;
};

placement placement_of_worker(weft::runtime& rt, std::size_t index) {
  auto r = rt.worker_scheduler(index)
               .spawn([]() -> weft::task<placement> { co_return placement{cpus_of_this_thread(), sched_getcpu()}; })
               .join();
  EXPECT_TRUE(r.has_value());
  return r ? *r : placement{};
}

}  // namespace

TEST(runtime_pinning, each_pinned_worker_runs_on_its_own_cpu) {
  const std::vector<unsigned> cpus = cpus_of_this_thread();
  if (cpus.size() < 2) GTEST_SKIP() << "needs at least 2 usable CPUs, this thread may use " << cpus.size();
  auto rt = weft::runtime::builder().workers(2).pin_workers().build();
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(rt.worker_cpu(i), std::optional<unsigned>(cpus[i])) << "worker " << i;
    const placement p = placement_of_worker(rt, i);
    EXPECT_EQ(p.allowed, std::vector<unsigned>{cpus[i]}) << "worker " << i << "'s affinity mask";
    EXPECT_EQ(p.running_on, static_cast<int>(cpus[i])) << "worker " << i;
  }
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(runtime_pinning, more_workers_than_cpus_wrap_around_the_allowed_cpus) {
  const std::vector<unsigned> cpus = cpus_of_this_thread();
  ASSERT_FALSE(cpus.empty());
  const std::size_t n = cpus.size() + 1;
  auto rt = weft::runtime::builder().workers(n).pin_workers().build();
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(rt.worker_cpu(i), std::optional<unsigned>(cpus[i % cpus.size()])) << "worker " << i;
  }
  EXPECT_EQ(placement_of_worker(rt, n - 1).allowed, std::vector<unsigned>{cpus[0]});
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(runtime_pinning, workers_are_not_pinned_by_default) {
  const std::vector<unsigned> cpus = cpus_of_this_thread();
  auto rt = weft::runtime::builder().workers(2).build();
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rt.worker_cpu(i), std::nullopt);
    EXPECT_EQ(placement_of_worker(rt, i).allowed, cpus) << "worker " << i << " inherits the builder's mask";
  }
  EXPECT_THROW((void)rt.worker_cpu(2), weft::usage_error);
  EXPECT_TRUE(std::move(rt).stop().is_complete());
}

TEST(runtime_pinning, a_restricted_builder_pins_within_its_own_mask) {
  // The CPUs come from the building thread's mask, not from the machine: restrict this thread to
  // its last allowed CPU, build from it, and every worker lands there.
  const std::vector<unsigned> cpus = cpus_of_this_thread();
  ASSERT_FALSE(cpus.empty());
  const unsigned last = cpus.back();
  std::optional<weft::runtime> rt;
  std::thread builder([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    rt.emplace(weft::runtime::builder().workers(2).pin_workers().build());
  });
  builder.join();
  ASSERT_TRUE(rt.has_value());
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rt->worker_cpu(i), std::optional<unsigned>(last));
    EXPECT_EQ(placement_of_worker(*rt, i).running_on, static_cast<int>(last));
  }
  EXPECT_TRUE(std::move(*rt).stop().is_complete());
}
