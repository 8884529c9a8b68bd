// A fuzz campaign runs in flat memory: after a warm-up, thousands more seeds of every built-in
// scenario (and of one that never advances virtual time) leave resident memory where it was, a
// campaign's seed count costs nothing up front, and the process never holds more than
// campaign_resident_bytes_max.
//
// A binary of its own, so the peak (VmHWM) is these campaigns' alone. Seeds run on one job (the
// calling thread's simulator thread, reused from scenario to scenario, as `fuzz --jobs 1`) and, for
// the scenario that never advances time, also on two (`--jobs 2`).
#include <gtest/gtest.h>

#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <weft/sim/context.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/weft.hpp>

#include "io_support.hpp"

namespace {

// Seeds each scenario runs before the first measurement: the allocator's arenas, the block
// recycler and the simulator thread reach their working size.
constexpr std::uint64_t warm_up_seeds = 500;
// Seeds each scenario runs between the two measurements.
constexpr std::uint64_t measured_seeds = 2'000;
// How much resident memory may grow over the measured seeds: allocator fragmentation, never a
// per-seed cost (one leaked 4 KiB page per seed would be 8 MiB).
constexpr std::size_t resident_growth_bytes_max = std::size_t{4} << 20;
// Sizes of memory_no_virtual_time (below): producer threads, and macrotasks each one sends.
constexpr std::int64_t producers_max = 3;
constexpr std::int64_t items_max = 20;

// g++ defines __SANITIZE_*__; clang 14 answers __has_feature only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WEFT_TEST_SANITIZED 1
#endif
#endif
#if defined(WEFT_TEST_SANITIZED)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

// A /proc/self/status field in bytes ("VmRSS:   1234 kB"), or 0 when it cannot be read.
std::size_t status_bytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::size_t bytes = 0;
  const std::size_t field_len = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, field_len) != 0 || line[field_len] != ':') continue;
    unsigned long long kib = 0;
    if (std::sscanf(line + field_len + 1, "%llu", &kib) == 1) bytes = static_cast<std::size_t>(kib) * 1024;
    break;
  }
  std::fclose(f);
  return bytes;
}

std::string kib(std::size_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

struct campaign_figures {
  std::size_t resident_after_warm_up = 0;
  std::size_t resident_at_end = 0;
  std::uint64_t failures = 0;
  std::string first_failure;
};

// Runs seeds [0, warm_up_seeds + measured_seeds) of `s` on `jobs` threads (job j takes every
// jobs-th seed, like `fuzz --jobs`), measuring resident memory after the warm-up and at the end,
// while every job's simulator thread is still alive. With `swarm`, every other seed picks its own
// fault mix (`--swarm`), so the fault paths (refused submissions, abandoned tasks, failed thread
// starts) are measured too.
campaign_figures run_campaign(const weft::sim::scenario& s, unsigned jobs, bool swarm) {
  campaign_figures out;
  std::vector<campaign_figures> per_job(jobs);
  std::barrier sync(static_cast<std::ptrdiff_t>(jobs));  // seam-ok: the jobs' host threads, outside any run
  auto job = [&](unsigned j) {
    campaign_figures& mine = per_job[j];
    auto run_range = [&](std::uint64_t from, std::uint64_t to) {
      for (std::uint64_t seed = from + j; seed < to; seed += jobs) {
        weft::sim::options o;
        o.swarm = swarm && seed % 2 == 1;
        const weft::sim::run_result r = weft::sim::run(s, seed, o);
        if (r.passed) continue;
        if (mine.failures++ == 0) mine.first_failure = "seed " + std::to_string(seed) + ": " + r.failures.front();
      }
    };
    run_range(0, warm_up_seeds);
    sync.arrive_and_wait();
    if (j == 0) out.resident_after_warm_up = status_bytes("VmRSS");
    sync.arrive_and_wait();
    run_range(warm_up_seeds, warm_up_seeds + measured_seeds);
    sync.arrive_and_wait();
    if (j == 0) out.resident_at_end = status_bytes("VmRSS");
    sync.arrive_and_wait();
  };
  if (jobs == 1) {
    job(0);
  } else {
    std::vector<std::thread> pool;  // seam-ok: simulator host code, outside any simulated run
    for (unsigned j = 0; j < jobs; ++j) pool.emplace_back(job, j);
    for (auto& t : pool) t.join();
  }
  for (const campaign_figures& f : per_job) {
    out.failures += f.failures;
    if (out.first_failure.empty()) out.first_failure = f.first_failure;
  }
  return out;
}

void expect_flat(const std::string& name, unsigned jobs, bool swarm) {
  if (sanitized) GTEST_SKIP() << "sanitizer shadow memory and quarantine are not the simulator's";
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  ASSERT_NE(s, nullptr) << name;
  const campaign_figures f = run_campaign(*s, jobs, swarm);
  const std::size_t peak = status_bytes("VmHWM");
  std::printf("%s, %u job(s): VmRSS %s after %llu seeds, %s after %llu; VmHWM %s\n", name.c_str(), jobs,
              kib(f.resident_after_warm_up).c_str(), static_cast<unsigned long long>(warm_up_seeds),
              kib(f.resident_at_end).c_str(), static_cast<unsigned long long>(warm_up_seeds + measured_seeds),
              kib(peak).c_str());
  // A failed seed may abandon its fibers (deadlock, livelock), which keeps them on purpose.
  EXPECT_EQ(f.failures, 0u) << f.first_failure;
  ASSERT_GT(f.resident_after_warm_up, 0u) << "/proc/self/status has no VmRSS";
  ASSERT_GT(peak, 0u) << "/proc/self/status has no VmHWM";
  EXPECT_LE(f.resident_at_end, f.resident_after_warm_up + resident_growth_bytes_max)
      << name << " grew by " << kib(f.resident_at_end - f.resident_after_warm_up) << " over " << measured_seeds
      << " seeds";
  EXPECT_LE(peak, weft::sim::campaign_resident_bytes_max);
}

class built_in_scenario : public testing::TestWithParam<const char*> {};

TEST_P(built_in_scenario, keeps_resident_memory_flat_over_thousands_of_seeds) { expect_flat(GetParam(), 1, true); }

INSTANTIATE_TEST_SUITE_P(campaign_memory, built_in_scenario,
                         testing::Values("wake_storm", "timer_storm", "inbox_overflow", "shutdown_race",
                                         "cross_worker_ping_pong", "blocking_saturation",
                                         "local_domain_dispatch", "drain_race", "remote_wake_order",
                                         "abort_race", "placement_race", "io_echo", "io_cancel_race",
                                         "kv_crash_recovery"),
                         [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(campaign_memory, a_scenario_that_never_advances_virtual_time_stays_flat) {
  expect_flat("memory_no_virtual_time", 1, false);
}

TEST(campaign_memory, a_scenario_that_never_advances_virtual_time_stays_flat_on_two_jobs) {
  expect_flat("memory_no_virtual_time", 2, false);
}

// Simulated I/O: every seed's sockets, ports, files and buffers die with its run (every other
// seed with --swarm, so the I/O faults are on in some of them).
TEST(campaign_memory, a_scenario_with_simulated_io_stays_flat) { expect_flat("memory_io_traffic", 1, true); }

TEST(campaign_memory, the_timeless_scenario_really_never_advances_virtual_time) {
  const weft::sim::scenario* s = weft::sim::registry::global().find("memory_no_virtual_time");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const weft::sim::run_result r = weft::sim::run(*s, seed, {});
    EXPECT_TRUE(r.passed) << (r.failures.empty() ? "" : r.failures.front());
    EXPECT_EQ(r.virtual_elapsed.count(), 0) << "seed " << seed;
  }
}

// The CLI computes a campaign's seeds as it runs them: a campaign whose list of seeds alone would
// hold twice the bound starts at once and stops at its first failure without having grown.
TEST(campaign_memory, a_huge_seed_count_costs_no_memory_up_front) {
  if (sanitized) GTEST_SKIP() << "sanitizer shadow memory and quarantine are not the simulator's";
  constexpr std::uint64_t seeds = 2 * weft::sim::campaign_resident_bytes_max / sizeof(std::uint64_t);
  std::vector<std::string> args = {"weft-sim-memory-tests", "fuzz", "--scenario", "memory_fails_at_once",
                                   "--seeds", std::to_string(seeds), "--max-failures", "1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  const int status = weft::sim::cli_main(static_cast<int>(argv.size()), argv.data());
  const std::string out = testing::internal::GetCapturedStdout();
  const std::size_t peak = status_bytes("VmHWM");
  std::printf("fuzz --seeds %llu --max-failures 1: VmHWM %s\n", static_cast<unsigned long long>(seeds),
              kib(peak).c_str());
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("fail: seed=0: fails on purpose"), std::string::npos) << out;
  ASSERT_GT(peak, 0u) << "/proc/self/status has no VmHWM";
  EXPECT_LE(peak, weft::sim::campaign_resident_bytes_max);
}

}  // namespace

// Fails every seed at once: a campaign of it ends at its first failure under --max-failures 1.
WEFT_SIM_SCENARIO(memory_fails_at_once) (weft::sim::context& sim) { sim.fail("fails on purpose"); }

// Loopback TCP both ways between two threads, and a file written, read back and unlinked.
WEFT_SIM_SCENARIO(memory_io_traffic) (weft::sim::context& sim) {
  weft::sim::io_test::tcp_exchange(sim);
  weft::sim::io_test::file_round_trip(sim);
}

// A user scenario that never sleeps: loop-thread producers push macrotasks into the main loop,
// retrying on `full` by yielding the thread, never by a timed wait. Some thread is always ready
// until the run ends, so virtual time never moves. It handles no injected fault: it runs without.
WEFT_SIM_SCENARIO_KNOBS(memory_no_virtual_time, {{"producers", 1, producers_max, "loop-thread producers"},
                                                  {"items", 1, items_max, "macrotasks each producer sends"}});
WEFT_SIM_SCENARIO(memory_no_virtual_time) (weft::sim::context& sim) {
  const std::int64_t producers = sim.param("producers", static_cast<std::int64_t>(sim.pick(1, producers_max)));
  const std::int64_t items = sim.param("items", static_cast<std::int64_t>(sim.pick(1, items_max)));
  weft::event_loop::options opts;
  opts.inbox_capacity = static_cast<std::size_t>(sim.pick(1, 4));
  weft::event_loop loop(opts);
  std::int64_t received = 0;  // the main loop's thread only
  for (std::int64_t p = 0; p < producers; ++p) {
    loop.spawn_loop_thread([target = loop.handle(), &received, items](weft::event_loop&) {
      for (std::int64_t i = 0; i < items; ++i) {
        while (!target.queue_macrotask([&received] { ++received; })) weft::platform::yield_thread();
      }
    });
  }
  loop.run();
  if (received != producers * items) {
    sim.fail("received " + std::to_string(received) + " of " + std::to_string(producers * items) + " macrotasks");
  }
}
