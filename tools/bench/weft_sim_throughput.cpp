// weft-bench-sim — the simulator's own throughput (docs/simulator.md, "Performance"): one scenario (default
// shutdown_race at 4 workers and 100 tasks, its default size) over consecutive seeds, one job
// (one simulator thread, as `weft-sim fuzz --jobs 1`), default options (random strategy, no
// faults). Prints bench lines (tools/bench/README.md):
//   scenario=sim_seeds_per_s     runtime=weft-sim value=<seeds per wall-clock second> unit=seeds/s
//   scenario=sim_steps_per_s     runtime=weft-sim value=<scheduling steps per wall second> unit=steps/s
//   scenario=sim_seeds_per_cpu_s runtime=weft-sim value=<seeds per CPU second (user+sys)> unit=seeds/cpu-s
// The CPU-time figure is what one core does when the machine is shared. A failing seed is an
// error (exit status 1): the figures are for a passing scenario.
//
//   weft-bench-sim [--seeds N] [--start S] [--scenario NAME] [--workers W] [--tasks T]
#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);  // every thread of the process, the simulator thread included
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "weft-bench-sim: %s\nusage: weft-bench-sim [--seeds N] [--start S] [--scenario NAME] "
                       "[--workers W] [--tasks T]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seeds = 2000;
  std::uint64_t start = 0;
  std::string name = "shutdown_race";
  std::int64_t workers = 4;
  std::int64_t tasks = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const char* value = argv[++i];
    if (arg == "--seeds") {
      seeds = std::strtoull(value, nullptr, 10);
    } else if (arg == "--start") {
      start = std::strtoull(value, nullptr, 10);
    } else if (arg == "--scenario") {
      name = value;
    } else if (arg == "--workers") {
      workers = std::strtoll(value, nullptr, 10);
    } else if (arg == "--tasks") {
      tasks = std::strtoll(value, nullptr, 10);
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  if (seeds == 0) usage("--seeds must be positive");
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  if (s == nullptr) usage(("no scenario " + name).c_str());

  weft::sim::options o;
  if (name == "shutdown_race") {
    o.params["workers"] = workers;
    o.params["tasks"] = tasks;
  }
  std::uint64_t steps = 0;
  const double cpu_began = cpu_seconds();
  const auto began = std::chrono::steady_clock::now();  // seam-ok: host code, measures the simulator
  for (std::uint64_t seed = start; seed < start + seeds; ++seed) {
    const weft::sim::run_result r = weft::sim::run(*s, seed, o);
    if (!r.passed) {
      std::fprintf(stderr, "weft-bench-sim: %s seed %llu failed: %s\n", name.c_str(),
                   static_cast<unsigned long long>(seed), r.failures.empty() ? "?" : r.failures.front().c_str());
      return 1;
    }
    steps += r.steps;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();  // seam-ok
  const double cpu = cpu_seconds() - cpu_began;
  const double n = static_cast<double>(seeds);
  std::printf("scenario=sim_seeds_per_s runtime=weft-sim value=%.1f unit=seeds/s\n", n / wall);
  std::printf("scenario=sim_steps_per_s runtime=weft-sim value=%.0f unit=steps/s\n", static_cast<double>(steps) / wall);
  std::printf("scenario=sim_seeds_per_cpu_s runtime=weft-sim value=%.1f unit=seeds/cpu-s\n", cpu > 0 ? n / cpu : 0.0);
  std::fprintf(stderr, "weft-bench-sim: %s workers=%lld tasks=%lld seeds=%llu..%llu steps=%llu (%.0f/seed) wall=%.3fs cpu=%.3fs\n",
               name.c_str(), static_cast<long long>(workers), static_cast<long long>(tasks),
               static_cast<unsigned long long>(start), static_cast<unsigned long long>(start + seeds - 1),
               static_cast<unsigned long long>(steps), static_cast<double>(steps) / n, wall, cpu);
  return 0;
}
