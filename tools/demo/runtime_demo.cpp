// runtime_demo.cpp — weft::runtime doing real work across its workers (tools/demo.sh, act 3).
//
// A runtime of N pinned workers (default 4). It
//   1. starts one task per worker with spawn_everywhere and checks each ran on its own worker;
//   2. spreads `jobs` tasks with spawn_anywhere; each hashes a block of data (CPU work), hands the
//      digest to a blocking-pool callback (standing in for a synchronous library call) and awaits
//      it without blocking its worker, then adds the result to its worker's shard — plain
//      per-worker data with no lock, safe because a task never leaves its worker;
//   3. stops with a typed outcome and prints, per worker, how many jobs ran there and the shard's
//      checksum; the totals are checked against values computed independently.
// Exit status 0 when every check holds; 2 for a bad flag (tools/tool_flags.hpp).
//
//   weft-runtime-demo [--workers N] [--jobs N]
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <weft/weft.hpp>

#include "../tool_flags.hpp"

namespace {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// The CPU work of one job: a few thousand rounds of a 64-bit mixer.
std::uint64_t digest(std::uint64_t seed) {
  std::uint64_t h = seed;
  for (int i = 0; i < 4'000; ++i) h = mix(h + static_cast<std::uint64_t>(i));
  return h;
}

// Jobs are all spawned up front; past this the demo measures memory, not the runtime.
constexpr std::size_t max_jobs = 10'000'000;

struct options {
  std::size_t workers = 4;
  std::size_t jobs = 2'000;
};

options parse(int argc, char** argv) {
  options o;
  try {
    tool_flags::reader r(argc, argv, "--workers N, --jobs N");
    while (r.next()) {
      if (r.is("--workers")) {
        o.workers = tool_flags::parse_integer<std::size_t>(r.flag(), r.value(), 1, weft::runtime::builder::workers_max);
      } else if (r.is("--jobs")) {
        o.jobs = tool_flags::parse_integer<std::size_t>(r.flag(), r.value(), 1, max_jobs);
      } else {
        r.unknown();
      }
    }
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error("weft-runtime-demo", e);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  auto rt = weft::runtime::builder().workers(opt.workers).blocking_capacity(4, 4'096).build();
  std::printf("runtime: %zu workers, %zu jobs\n", rt.worker_count(), opt.jobs);

  // Per-worker results, written by that worker's tasks only (index = worker), read after stop.
  struct per_worker {
    std::uint64_t jobs = 0;
    std::uint64_t checksum = 0;
  };
  std::vector<per_worker> shards(rt.worker_count());

  // 1. A task on every worker that reports where it runs: proves spawn_everywhere's placement.
  std::vector<std::size_t> placed;
  for (auto& h : rt.scheduler().spawn_everywhere([]() -> weft::task<std::size_t> {
         co_return weft::builtins::current().worker().index;
       })) {
    auto r = h.join();
    placed.push_back(r ? *r : SIZE_MAX);
  }

  // 2. The jobs.
  std::vector<weft::join_handle<std::uint64_t>> handles;
  handles.reserve(opt.jobs);
  for (std::size_t j = 0; j < opt.jobs; ++j) {
    handles.push_back(rt.scheduler().spawn_anywhere([j, &shards]() -> weft::task<std::uint64_t> {
      auto& b = weft::builtins::current();
      const std::uint64_t d = digest(j);
      // A synchronous call on the blocking pool, awaited without blocking the worker.
      auto folded = co_await b.scheduler().spawn_blocking([d] { return mix(d); });
      if (!folded) throw std::runtime_error("blocking call refused");
      // Worker-local state, no lock: this task never leaves its worker.
      per_worker& mine = shards[b.worker().index];
      mine.jobs += 1;
      mine.checksum += *folded;
      co_return *folded;
    }));
  }
  std::uint64_t joined_sum = 0;
  std::size_t failures = 0;
  for (auto& h : handles) {
    auto r = h.join();
    if (r) {
      joined_sum += *r;
    } else {
      ++failures;
    }
  }
  const weft::stop_outcome outcome = std::move(rt).stop();

  // 3. Report and check.
  std::uint64_t expected_sum = 0;
  for (std::size_t j = 0; j < opt.jobs; ++j) expected_sum += mix(digest(j));
  std::uint64_t jobs_seen = 0, shard_sum = 0;
  for (std::size_t w = 0; w < shards.size(); ++w) {
    std::printf("  worker %zu: %6llu jobs  checksum %016llx  (spawn_everywhere placed task %zu here)\n", w,
                static_cast<unsigned long long>(shards[w].jobs), static_cast<unsigned long long>(shards[w].checksum),
                w < placed.size() ? placed[w] : SIZE_MAX);
    jobs_seen += shards[w].jobs;
    shard_sum += shards[w].checksum;
  }
  std::printf("stop: %s\n", outcome.is_complete() ? "complete" : outcome.is_incomplete() ? "incomplete" : "error");
  bool ok = failures == 0 && jobs_seen == opt.jobs && shard_sum == expected_sum && joined_sum == expected_sum &&
            outcome.is_complete();
  for (std::size_t w = 0; w < placed.size(); ++w) ok = ok && placed[w] == w;
  std::printf("runtime demo: %s (%zu failures, %llu jobs accounted, sums %s)\n", ok ? "ok" : "WRONG", failures,
              static_cast<unsigned long long>(jobs_seen), shard_sum == expected_sum ? "match" : "differ");
  return ok ? 0 : 1;
}
