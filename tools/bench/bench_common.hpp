// tools/bench/bench_common.hpp — what the C++ scenario programs (weft, Asio) share, mirrored in
// Rust by peers/common/bench_common.rs: arguments, the result line, medians, the CPU kernel,
// resident memory, and a probe for the size of a coroutine frame.
//
// Arguments: [--scale F] [--scenario NAME|all] [--list]. --scale multiplies every iteration count
// (at least 1 of each), so the test suite can run a tiny version; the work per item never changes.
// A bad flag ends the program with exit status 2 and one line naming it (../tool_flags.hpp).
#pragma once

#include "../tool_flags.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

namespace bench {

inline constexpr const char* scenario_names[] = {"spawn_join_1", "spawn_join_1024", "yield_storm", "ping_pong",
                                                 "timers_100k",  "timeout_churn",   "cpu_scaling", "task_memory"};
// The work-stealing pool's scenarios: weft's stealing_pool against tokio and async-executor only
// (Asio has no pool of that kind here), so only the programs that run them accept their names.
inline constexpr const char* pool_scenario_names[] = {"pool_spawn_join_1024", "pool_yield_storm", "pool_nested_spawn",
                                                      "steal_imbalance",      "external_producers", "priority_latency"};

// The ~50 us integer-hash kernel of cpu_scaling (~5.6 ns per iteration on the reference machine).
// The Rust peers use the same constants and count (peers/common/bench_common.rs).
inline constexpr std::uint64_t kernel_iterations = 9'000;

// steal_imbalance's and priority_latency's shorter busy loop: ~20 us (the same in the Rust peers).
inline constexpr std::uint64_t short_kernel_iterations = 3'600;

inline std::uint64_t kernel(std::uint64_t seed, std::uint64_t iterations = kernel_iterations) noexcept {
  std::uint64_t x = seed;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    x += i;
  }
  return x;
}

// --scale's accepted range: below the minimum every count is already 1; past the maximum the
// largest scenario's counts no longer fit in memory.
inline constexpr double min_scale = 1e-6;
inline constexpr double max_scale = 100.0;

struct args {
  double scale = 1.0;
  std::string scenario = "all";

  bool wants(std::string_view name) const { return scenario == "all" || scenario == name; }
  // `base` scaled by --scale, at least 1.
  std::size_t count(std::size_t base) const {
    return static_cast<std::size_t>(std::max(1.0, std::round(static_cast<double>(base) * scale)));
  }
};

// `with_pool`: the program also runs the pool scenarios (pool_scenario_names).
inline args parse_args(int argc, char** argv, bool with_pool = false) {
  args a;
  std::vector<const char*> names(std::begin(scenario_names), std::end(scenario_names));
  if (with_pool) names.insert(names.end(), std::begin(pool_scenario_names), std::end(pool_scenario_names));
  std::string accepted_scenarios = "all";
  for (const char* s : names) accepted_scenarios += std::string(", ") + s;
  try {
    tool_flags::reader r(argc, argv, "--scale F, --scenario NAME|all, --list");
    while (r.next()) {
      if (r.is("--scale")) {
        a.scale = tool_flags::parse_decimal(r.flag(), r.value(), min_scale, max_scale);
      } else if (r.is("--scenario")) {
        a.scenario = r.value();
        const bool known = a.scenario == "all" ||
                           std::any_of(names.begin(), names.end(), [&](const char* s) { return a.scenario == s; });
        if (!known) {
          throw tool_flags::usage_error(r.flag(), "unknown scenario '" + a.scenario + "'; accepted: " + accepted_scenarios);
        }
      } else if (r.is("--list")) {
        for (const char* s : names) std::printf("%s\n", s);
        std::exit(0);
      } else {
        r.unknown();
      }
    }
  } catch (const tool_flags::usage_error& e) {
    const std::string_view program = argv[0];
    tool_flags::exit_with_usage_error(program.substr(program.find_last_of('/') + 1), e);
  }
  return a;
}

inline void report(const char* scenario, const char* runtime, double value, const char* unit) {
  std::printf("scenario=%s runtime=%s value=%.3f unit=%s\n", scenario, runtime, value, unit);
  std::fflush(stdout);
}

[[noreturn]] inline void fail(const char* scenario, const char* what) {
  std::fprintf(stderr, "%s: %s\n", scenario, what);
  std::exit(1);
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The nearest-rank percentile `q` (0 < q <= 1) of `v`; 0 for an empty `v`.
inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// priority_latency's five lines from its probes' latencies (us) per priority; the Rust peers print
// the same (their one queue takes both kinds of probe).
inline void report_priority_latency(const char* runtime, const std::vector<double>& high,
                                    const std::vector<double>& background) {
  const double high_p99 = percentile(high, 0.99);
  const double background_p99 = percentile(background, 0.99);
  if (!(background_p99 > 0)) fail("priority_latency", "no background latency measured");
  report("priority_latency_high_p50", runtime, percentile(high, 0.5), "us");
  report("priority_latency_high_p99", runtime, high_p99, "us");
  report("priority_latency_background_p50", runtime, percentile(background, 0.5), "us");
  report("priority_latency_background_p99", runtime, background_p99, "us");
  report("priority_latency_ratio", runtime, high_p99 / background_p99, "x");
}

using wall = std::chrono::steady_clock;
inline double ns_since(wall::time_point t0) { return std::chrono::duration<double, std::nano>(wall::now() - t0).count(); }

// ---- ping_pong's diagnostics (measured after the timed exchange, never inside it) -------------

// A small number naming the calling thread (1, 2, ... in order of first use). ping_pong_cross
// tags each message with the thread that sent it, so the receiver can tell whether the message
// crossed threads. The Rust peers do the same (peers/common/bench_common.rs).
inline std::uint64_t thread_tag() noexcept {
  static std::atomic<std::uint64_t> next{1};
  // relaxed: only the uniqueness of the numbers matters, nothing is published through them.
  thread_local const std::uint64_t tag = next.fetch_add(1, std::memory_order_relaxed);
  return tag;
}
inline constexpr unsigned message_tag_bits = 16;
inline constexpr std::uint64_t message_tag_mask = (std::uint64_t{1} << message_tag_bits) - 1;
// A message carrying sequence number `seq` from the calling thread.
inline std::uint64_t tagged_message(std::uint64_t seq) noexcept { return (seq << message_tag_bits) | thread_tag(); }
inline std::uint64_t message_seq(std::uint64_t message) noexcept { return message >> message_tag_bits; }
// Whether `message` was sent from a thread other than the calling one.
inline bool message_crossed(std::uint64_t message) noexcept { return (message & message_tag_mask) != thread_tag(); }

// One polite step of a spin loop (x86's pause; nothing elsewhere).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// The machine's floor under ping_pong: two plain threads bounce one cache line each way (a
// counter each, spinning on a load with a pause between checks) — no runtime, no mailbox, no
// wake, no sleep. ns per round trip: the least any runtime can pay when its two tasks really run
// on two cores. (Reported once, by weft-bench-scenarios, as runtime=machine.)
inline double cross_core_round_trip_ns(std::uint64_t round_trips) {
  struct alignas(64) line {
    std::atomic<std::uint64_t> value{0};
  };
  line ping, pong;
  // Spins until `v` holds `want`. Past spins_before_yield pauses the other thread is evidently
  // not running (a loaded or 1-core machine): give it the core instead of burning a time slice.
  // On an idle machine the answer comes within a few pauses and this never yields.
  constexpr int spins_before_yield = 4096;
  auto wait_for = [](const std::atomic<std::uint64_t>& v, std::uint64_t want) {
    int spins = 0;
    while (v.load(std::memory_order_acquire) != want) {  // pairs with the other side's release store
      if (spins < spins_before_yield) {
        ++spins;
        spin_pause();
      } else {
        std::this_thread::yield();
      }
    }
  };
  std::thread echo([&] {
    for (std::uint64_t i = 1; i <= round_trips; ++i) {
      wait_for(ping.value, i);
      pong.value.store(i, std::memory_order_release);  // pairs with wait_for's acquire load
    }
  });
  const auto t0 = wall::now();
  for (std::uint64_t i = 1; i <= round_trips; ++i) {
    ping.value.store(i, std::memory_order_release);  // pairs with wait_for's acquire load
    wait_for(pong.value, i);
  }
  const double ns = ns_since(t0);
  echo.join();
  return ns / static_cast<double>(round_trips);
}

// The machine's own speedup under cpu_scaling: `n` runs of kernel() split evenly over `threads` plain
// threads (the caller and threads - 1 others), no runtime, no queue, no task; kernels per second.
// bare_kernel_tasks_per_s(2, n) / bare_kernel_tasks_per_s(1, n) is the speedup of the work itself
// here (two busy cores of a VM need not each run as fast as one alone): a runtime that adds no
// cost per task matches it, and one whose single worker runs slower than a plain thread can show
// more (its cpu_1w, the divisor, is lower).
// (Reported once, by weft-bench-scenarios, as cpu_speedup_bare, runtime=machine.)
inline double bare_kernel_tasks_per_s(std::size_t threads, std::uint64_t n) {
  std::vector<std::uint64_t> results(threads, 0);
  auto share = [&](std::size_t k) {
    std::uint64_t acc = 0;
    for (std::uint64_t i = k * n / threads; i < (k + 1) * n / threads; ++i) acc ^= kernel(i);
    results[k] = acc;  // each thread its own slot; read after the joins below
  };
  const auto t0 = wall::now();
  std::vector<std::thread> others;
  for (std::size_t k = 1; k < threads; ++k) others.emplace_back(share, k);
  share(0);
  for (auto& t : others) t.join();
  const double s = ns_since(t0) / 1e9;
  std::uint64_t acc = 0;
  for (const std::uint64_t r : results) acc ^= r;
  if (acc == 1) std::abort();  // keeps the results alive (as cpu_scaling does)
  return static_cast<double>(n) / s;
}

// Resident set size of this process in bytes (/proc/self/statm, second field).
inline std::uint64_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// The size of the last ::operator new request made on this thread. Each C++ scenario program
// replaces the global operator new with one that records it (bench_alloc_probe.hpp), so a
// coroutine's frame size can be read right after the call that created the frame.
inline thread_local std::size_t last_allocation_bytes = 0;

// Ends the process after task_memory: 1,000,000 parked tasks are not torn down (the same in every
// program of the comparison).
[[noreturn]] inline void quick_exit_ok() {
  std::fflush(stdout);
  std::_Exit(0);
}

}  // namespace bench
