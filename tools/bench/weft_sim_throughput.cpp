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
// --world measures a simulated world instead: kv_crash_recovery with 2 client hosts (3 hosts in
// all), its other knobs drawn per seed, printed as sim_world_seeds_per_s, sim_world_steps_per_s
// and sim_world_seeds_per_cpu_s.
//
//   weft-bench-sim [--seeds N] [--start S] [--scenario NAME] [--workers W] [--tasks T] | --world
// --workers and --tasks set the scenario's knobs of those names, within the ranges it declares
// (`weft-sim list`); left out, the scenario's defaults apply. A bad flag, or options the
// simulator refuses, end the program before the first run with exit status 2
// (tools/tool_flags.hpp).
#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include <sys/resource.h>

#include "../tool_flags.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);  // every thread of the process, the simulator thread included
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// One figure wants thousands of seeds; past this a run takes days rather than seconds.
constexpr std::uint64_t max_seeds = 1'000'000'000;
// --start takes any seed; its last seed, start + seeds - 1, must be one too (checked after parsing).
constexpr std::uint64_t max_start = std::numeric_limits<std::uint64_t>::max();
// --world's client hosts: with the server's, three hosts.
constexpr std::int64_t world_client_hosts = 2;

// `flag`'s value for the scenario knob `knob_name`, within the range `s` declares for it.
std::int64_t knob_value(const weft::sim::scenario& s, const char* knob_name, const std::string& flag,
                        std::string_view text) {
  const weft::sim::knob* k = s.find_knob(knob_name);
  if (k == nullptr) throw tool_flags::usage_error(flag, "scenario " + s.name + " has no knob " + knob_name);
  return tool_flags::parse_integer(flag, text, k->min, k->max);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seeds = 2000;
  std::uint64_t start = 0;
  std::string name = "shutdown_race";
  // Taken as text until the scenario, which may come later on the line, is known.
  std::optional<std::string> workers_text, tasks_text;
  bool world = false;
  bool scenario_given = false;
  std::string figure = "sim";  // the figures' prefix
  const weft::sim::scenario* s = nullptr;
  weft::sim::options o;
  try {
    tool_flags::reader r(argc, argv, "--seeds N, --start S, --scenario NAME, --workers W, --tasks T, --world");
    while (r.next()) {
      if (r.is("--seeds")) {
        seeds = tool_flags::parse_integer<std::uint64_t>(r.flag(), r.value(), 1, max_seeds);
      } else if (r.is("--start")) {
        start = tool_flags::parse_integer<std::uint64_t>(r.flag(), r.value(), 0, max_start);
      } else if (r.is("--scenario")) {
        name = r.value();
        scenario_given = true;
      } else if (r.is("--world")) {
        world = true;
      } else if (r.is("--workers")) {
        workers_text = r.value();
      } else if (r.is("--tasks")) {
        tasks_text = r.value();
      } else {
        r.unknown();
      }
    }
    if (seeds - 1 > max_start - start) {
      throw tool_flags::usage_error("--start", std::to_string(start) + " with --seeds " + std::to_string(seeds) +
                                                   " runs past the last seed " + std::to_string(max_start));
    }
    if (world) {
      if (scenario_given || workers_text || tasks_text) {
        throw tool_flags::usage_error("--world", "measures kv_crash_recovery with 3 hosts; it takes no --scenario, "
                                                 "--workers or --tasks");
      }
      name = "kv_crash_recovery";
      figure = "sim_world";
      o.params["clients"] = world_client_hosts;
    }
    s = weft::sim::registry::global().find(name);
    if (s == nullptr) throw tool_flags::usage_error("--scenario", "no scenario '" + name + "' (see `weft-sim list`)");
    if (workers_text) o.params["workers"] = knob_value(*s, "workers", "--workers", *workers_text);
    if (tasks_text) o.params["tasks"] = knob_value(*s, "tasks", "--tasks", *tasks_text);
    weft::sim::validate(*s, o);  // what run() would throw for, before the first run
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error("weft-bench-sim", e);
  } catch (const weft::sim::invalid_options& e) {
    tool_flags::exit_with_usage_error("weft-bench-sim", e);
  }

  std::uint64_t steps = 0;
  const double cpu_began = cpu_seconds();
  const auto began = std::chrono::steady_clock::now();  // seam-ok: host code, measures the simulator
  // Counted from 0 so that a range ending at the largest seed does not wrap.
  for (std::uint64_t i = 0; i < seeds; ++i) {
    const std::uint64_t seed = start + i;
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
  const char* f = figure.c_str();
  std::printf("scenario=%s_seeds_per_s runtime=weft-sim value=%.1f unit=seeds/s\n", f, n / wall);
  std::printf("scenario=%s_steps_per_s runtime=weft-sim value=%.0f unit=steps/s\n", f, static_cast<double>(steps) / wall);
  std::printf("scenario=%s_seeds_per_cpu_s runtime=weft-sim value=%.1f unit=seeds/cpu-s\n", f, cpu > 0 ? n / cpu : 0.0);
  std::fprintf(stderr, "weft-bench-sim: %s %s seeds=%llu..%llu steps=%llu (%.0f/seed) wall=%.3fs cpu=%.3fs\n",
               name.c_str(), weft::sim::describe(o).c_str(),
               static_cast<unsigned long long>(start), static_cast<unsigned long long>(start + seeds - 1),
               static_cast<unsigned long long>(steps), static_cast<double>(steps) / n, wall, cpu);
  return 0;
}
