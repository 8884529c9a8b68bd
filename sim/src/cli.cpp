// cli.cpp — the weft-sim command line: list, run, replay, fuzz, shrink.
//
// Every run prints its options first, then the knobs the scenario resolved, the trace hash, a
// replay command and the outcome. Wall-clock time appears only in throughput figures and progress
// bars (outside any simulation).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "shrink.hpp"

namespace weft::sim {

namespace {

// Concatenation by appending (GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O3).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

struct common_flags {
  std::string scenario;
  std::string strategy = "random";
  std::uint32_t depth = 3;
  std::uint64_t pct_steps = options{}.pct_steps;
  std::uint64_t step_budget = options{}.step_budget;
  std::uint32_t cores = options{}.cores;
  std::uint64_t max_preemptions = options::unbounded;
  std::vector<std::string> faults;
  std::vector<std::string> params;
  bool swarm = false;
  bool check_determinism = false;
};

void add_common(CLI::App& app, common_flags& f) {
  app.add_option("--scenario", f.scenario, "scenario name (see `list`)")->required();
  app.add_option("--strategy", f.strategy, "random | pct")->check(CLI::IsMember({"random", "pct"}));
  app.add_option("--depth", f.depth, "PCT bug depth d (d - 1 priority change points)");
  app.add_option("--pct-steps", f.pct_steps, "PCT: change points are drawn from steps [1, k]");
  app.add_option("--step-budget", f.step_budget, "livelock: fail after this many scheduling points");
  app.add_option("--cores", f.cores, "what hardware_concurrency() answers in the simulation");
  app.add_option("--preemptions", f.max_preemptions,
                 "preemption bound: at most N switches away from a thread that could go on (default: none)");
  app.add_option("--fault", f.faults, "KIND=PROBABILITY, e.g. inbox_full=0.05 (repeatable)");
  app.add_option("--param", f.params, "NAME=INTEGER scenario knob (repeatable)");
  app.add_flag("--swarm", f.swarm, "each seed picks its own fault mix");
  app.add_flag("--check-determinism", f.check_determinism, "run each seed twice and compare the traces");
}

options to_options(const common_flags& f) {
  options o;
  o.strategy = f.strategy == "pct" ? strategy_kind::pct : strategy_kind::random;
  o.pct_depth = f.depth;
  o.pct_steps = f.pct_steps;
  o.step_budget = f.step_budget;
  o.cores = f.cores;
  o.max_preemptions = f.max_preemptions;
  o.swarm = f.swarm;
  for (const auto& spec : f.faults) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    bool known = false;
    for (std::size_t k = 0; k < fault_kinds; ++k) {
      if (name != platform::fault_name(static_cast<platform::fault>(k))) continue;
      known = true;
      const double p = eq == std::string::npos ? 1.0 : std::stod(spec.substr(eq + 1));
      if (p < 0.0 || p > 1.0) throw CLI::ValidationError("--fault", "probability must be in [0, 1]: " + spec);
      o.faults.rate_ppm[k] = static_cast<std::uint32_t>(p * ppm_one + 0.5);
    }
    if (!known) throw CLI::ValidationError("--fault", "unknown fault kind: " + name);
  }
  for (const auto& spec : f.params) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos) throw CLI::ValidationError("--param", "expected NAME=INTEGER: " + spec);
    o.params[spec.substr(0, eq)] = std::stoll(spec.substr(eq + 1));
  }
  return o;
}

std::string replay_command(const std::string& program, const std::string& scenario, std::uint64_t seed,
                           const options& o) {
  return cat(program, " replay --scenario ", scenario, " --seed ", std::to_string(seed), " ", replay_arguments(o));
}

// Runs twice with full traces; returns a description of the first divergence, or "".
std::string check_determinism(const scenario& s, std::uint64_t seed, options o, run_result& first) {
  o.record_trace = true;
  first = run(s, seed, o);
  const run_result second = run(s, seed, o);
  if (first.trace_hash == second.trace_hash && first.events.size() == second.events.size()) return "";
  const std::size_t n = std::min(first.events.size(), second.events.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (first.events[i].line == second.events[i].line) continue;
    return cat("first divergent event #", std::to_string(i), "\n  run 1: ", first.events[i].line, "\n  run 2: ",
               second.events[i].line);
  }
  return cat("traces differ in length (", std::to_string(first.events.size()), " vs ",
             std::to_string(second.events.size()), " events) after a common prefix");
}

std::string knob_list(const std::map<std::string, std::int64_t>& params) {
  if (params.empty()) return "none";
  std::string s;
  for (const auto& [k, v] : params) {
    if (!s.empty()) s += ",";
    s += cat(k, "=", std::to_string(v));
  }
  return s;
}

const scenario* find_scenario(const std::string& name) {
  const scenario* s = registry::global().find(name);
  if (s == nullptr) std::fprintf(stderr, "weft-sim: no scenario named '%s' (see `list`)\n", name.c_str());
  return s;
}

// A progress bar on stderr when it is a terminal; `tty` decides.
void draw_bar(std::size_t done, std::size_t total, const std::string& tail) {
  const int width = 40;
  const int filled = total == 0 ? width : static_cast<int>(width * std::min(done, total) / total);
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %s", filled, "========================================", width - filled,
               "", done, total, tail.c_str());
  std::fflush(stderr);
}

// Shrinks (seed, o) and prints the report; returns the exit status of `shrink`.
int report_shrink(const std::string& program, const scenario& s, std::uint64_t seed, const options& o,
                  const shrink_limits& limits) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto began = std::chrono::steady_clock::now();  // seam-ok: progress reporting, simulator host code outside any run
  auto last_draw = began;
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  if (tty) {
    progress = [&](std::uint64_t runs, std::uint64_t limit) {
      const auto now = std::chrono::steady_clock::now();  // seam-ok: simulator host code, outside any simulated run
      if (now - last_draw < std::chrono::milliseconds(100) && runs != limit) return;
      last_draw = now;
      draw_bar(runs, limit, "runs (budget)");
    };
  }
  const shrink_result r = shrink(s, seed, o, limits, progress);
  if (tty) std::fprintf(stderr, "\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();  // seam-ok: simulator host code, outside any simulated run
  if (!r.reproduced) {
    std::printf("shrink: seed %llu passes with these options; nothing to shrink\n",
                static_cast<unsigned long long>(seed));
    return 1;
  }
  std::printf("shrink: original fails: %s\n", failure_signature(r.original.result).c_str());
  std::printf("shrink: original knobs: params: %s\n", knob_list(r.original.result.params).c_str());
  if (!r.made_explicit) {
    std::printf("shrink: note: the explicit form of the options did not replay the run; faults were not shrunk\n");
  }
  for (const auto& step : r.log) std::printf("shrink: kept %s\n", step.c_str());
  std::printf("shrink: %llu runs in %.2f s%s\n", static_cast<unsigned long long>(r.runs), seconds,
              r.budget_exhausted ? " (run budget exhausted: --max-runs)" : "");
  std::printf("shrunk:\n");
  for (const auto& line : compare(r.original, r.minimal)) std::printf("%s\n", line.c_str());
  const auto& m = r.minimal;
  std::printf("failure: %s\n", m.result.failures.empty() ? "failed" : m.result.failures.front().substr(0, m.result.failures.front().find('\n')).c_str());
  std::printf("params: %s\n", knob_list(m.result.params).c_str());
  std::printf("trace-hash: %s\n", hex16(m.result.trace_hash).c_str());
  std::printf("replay: %s\n", replay_command(program, s.name, m.seed, m.opts).c_str());
  std::printf("outcome: %s\n", r.log.empty() ? "minimal (no smaller failing case found)" : "shrunk");
  return 0;
}

int cmd_list() {
  for (const scenario* s : registry::global().all()) {
    std::printf("%-24s %s\n", s->name.c_str(), s->description.c_str());
  }
  return 0;
}

int cmd_run(const std::string& program, const common_flags& f, std::uint64_t seed, const std::string& trace_file,
            const std::string& chrome_file) {
  const scenario* s = registry::global().find(f.scenario);
  if (s == nullptr) {
    std::fprintf(stderr, "weft-sim: no scenario named '%s' (see `list`)\n", f.scenario.c_str());
    return 2;
  }
  options o = to_options(f);
  std::printf("weft-sim: scenario=%s seed=%llu %s\n", f.scenario.c_str(), static_cast<unsigned long long>(seed),
              describe(resolve(o, seed)).c_str());
  std::fflush(stdout);
  o.record_trace = !trace_file.empty() || !chrome_file.empty();
  run_result r;
  std::string divergence;
  if (f.check_determinism) {
    divergence = check_determinism(*s, seed, o, r);
  } else {
    r = run(*s, seed, o);
  }
  for (const auto& failure : r.failures) std::printf("failure: %s\n", failure.c_str());
  std::printf("params: %s\n", knob_list(r.params).c_str());
  if (!divergence.empty()) std::printf("determinism: DIVERGED, %s\n", divergence.c_str());
  if (!trace_file.empty()) {
    std::ofstream out(trace_file);
    write_text(out, r.events);
  }
  if (!chrome_file.empty()) {
    std::ofstream out(chrome_file);
    write_chrome(out, r.events, r.fiber_names);
  }
  std::printf("stats: steps=%llu switches=%llu preemptions=%llu threads=%llu faults=%llu virtual-ns=%lld\n",
              static_cast<unsigned long long>(r.steps), static_cast<unsigned long long>(r.switches),
              static_cast<unsigned long long>(r.preemptions), static_cast<unsigned long long>(r.fibers),
              static_cast<unsigned long long>(r.faults),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(r.virtual_elapsed).count()));
  std::printf("trace-hash: %s\n", hex16(r.trace_hash).c_str());
  std::printf("replay: %s\n", replay_command(program, f.scenario, seed, o).c_str());
  const bool pass = r.passed && divergence.empty();
  std::printf("outcome: %s\n", pass ? "pass" : "fail");
  return pass ? 0 : 1;
}

struct shard_spec {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

shard_spec parse_shard(const std::string& s) {
  shard_spec out;
  if (s.empty()) return out;
  const auto slash = s.find('/');
  if (slash == std::string::npos) throw CLI::ValidationError("--shard", "expected i/n, e.g. 0/4");
  out.index = std::stoull(s.substr(0, slash));
  out.count = std::stoull(s.substr(slash + 1));
  if (out.count == 0 || out.index >= out.count) throw CLI::ValidationError("--shard", "need 0 <= i < n");
  return out;
}

int cmd_fuzz(const std::string& program, const common_flags& f, std::uint64_t seeds, std::uint64_t start,
             unsigned jobs, const std::string& shard_text, std::uint64_t max_failures, bool shrink_first,
             const shrink_limits& limits) {
  const scenario* s = find_scenario(f.scenario);
  if (s == nullptr) return 2;
  const shard_spec shard = parse_shard(shard_text);
  const options o = to_options(f);
  // This shard's k-th seed (k < mine) is start + shard.index + k * shard.count: computed when it
  // runs, never listed, so a campaign's memory does not grow with its seed count.
  const std::uint64_t mine = seeds > shard.index ? (seeds - shard.index - 1) / shard.count + 1 : 0;
  jobs = std::max(1u, jobs);
  std::printf("weft-sim fuzz: scenario=%s seeds=%llu..%llu shard=%llu/%llu jobs=%u %s%s\n", f.scenario.c_str(),
              static_cast<unsigned long long>(start), static_cast<unsigned long long>(start + seeds - 1),
              static_cast<unsigned long long>(shard.index), static_cast<unsigned long long>(shard.count), jobs,
              describe(o).c_str(), f.check_determinism ? " check-determinism=on" : "");
  std::fflush(stdout);

  struct failure {
    std::uint64_t seed;
    std::string why;
  };
  std::mutex lock;
  std::vector<failure> failures;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::atomic<std::uint64_t> total_steps{0};
  std::atomic<bool> stop{false};
  const auto began = std::chrono::steady_clock::now();  // seam-ok: throughput only, host code; never enters a run
  auto worker = [&] {
    for (;;) {
      if (stop.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= mine) return;
      const std::uint64_t seed = start + shard.index + i * shard.count;
      run_result r;
      std::string why;
      if (f.check_determinism) {
        const std::string d = check_determinism(*s, seed, o, r);
        if (!d.empty()) why = "nondeterministic: " + d;
      } else {
        r = run(*s, seed, o);
      }
      total_steps.fetch_add(r.steps);
      if (why.empty() && !r.passed) why = r.failures.empty() ? "failed" : r.failures.front();
      if (!why.empty()) {
        std::lock_guard<std::mutex> hold(lock);
        failures.push_back({seed, why.substr(0, why.find('\n'))});
        if (max_failures != 0 && failures.size() >= max_failures) stop.store(true);
      }
      finished.fetch_add(1);
    }
  };
  std::vector<std::thread> pool;  // seam-ok: simulator host code, outside any simulated run
  for (unsigned j = 0; j < jobs; ++j) pool.emplace_back(worker);
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) {
    while (finished.load() < mine && !stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const std::size_t done = finished.load();
      std::size_t failed;
      {
        std::lock_guard<std::mutex> hold(lock);
        failed = failures.size();
      }
      draw_bar(done, mine, cat("seeds, ", std::to_string(failed), " failures"));
    }
    std::fprintf(stderr, "\n");
  }
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();  // seam-ok: simulator host code, outside any simulated run

  std::sort(failures.begin(), failures.end(), [](const failure& a, const failure& b) { return a.seed < b.seed; });
  for (const auto& fl : failures) {
    std::printf("fail: seed=%llu: %s\n", static_cast<unsigned long long>(fl.seed), fl.why.c_str());
    std::printf("  replay: %s\n", replay_command(program, f.scenario, fl.seed, o).c_str());
  }
  const std::size_t ran = finished.load();
  if (ran < mine) {
    std::printf("fuzz: stopped after %zu failures (--max-failures)\n", failures.size());
  }
  const double steps = static_cast<double>(total_steps.load());
  std::printf("stats: steps=%.0f steps/s=%.0f seeds/s/job=%.0f wall-s=%.3f jobs=%u\n", steps,
              seconds > 0 ? steps / seconds : 0.0, seconds > 0 ? static_cast<double>(ran) / seconds / jobs : 0.0,
              seconds, jobs);
  std::printf("fuzz: %zu seeds, %zu failures, %.0f seeds/s\n", ran, failures.size(),
              seconds > 0 ? static_cast<double>(ran) / seconds : 0.0);
  if (shrink_first && !failures.empty() && !f.check_determinism) {
    std::printf("fuzz: shrinking the first failure (seed %llu)\n", static_cast<unsigned long long>(failures.front().seed));
    std::fflush(stdout);
    report_shrink(program, *s, failures.front().seed, o, limits);
  }
  return failures.empty() ? 0 : 1;
}

}  // namespace

int cli_main(int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : "weft-sim";
  shrink_limits limits;
  auto add_limits = [&limits](CLI::App* sub) {
    sub->add_option("--max-runs", limits.max_runs, "shrink: simulations the search may spend");
    sub->add_option("--seed-tries", limits.seed_tries, "shrink: seeds tried per smaller candidate");
    sub->add_option("--param-floor", limits.param_floor, "shrink: lowest value a scenario knob is lowered to");
    sub->add_flag("!--any-failure", limits.same_failure,
                  "shrink: accept any failure, not only one of the original's kind");
  };
  CLI::App app{"weft-sim: deterministic simulation of weft programs"};
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "list the registered scenarios");

  common_flags run_flags;
  std::uint64_t run_seed = 0;
  std::string trace_file;
  std::string chrome_file;
  auto add_run_like = [&](CLI::App* sub) {
    add_common(*sub, run_flags);
    sub->add_option("--seed", run_seed, "the seed")->required();
    sub->add_option("--trace", trace_file, "write the event trace as text");
    sub->add_option("--chrome-trace", chrome_file, "write Chrome Trace Event JSON (Perfetto)");
  };
  CLI::App* run_cmd = app.add_subcommand("run", "run one seed");
  add_run_like(run_cmd);
  CLI::App* replay_cmd = app.add_subcommand("replay", "replay a seed (takes the command a failure printed)");
  add_run_like(replay_cmd);

  common_flags fuzz_flags;
  std::uint64_t seeds = 0;
  std::uint64_t start = 0;
  unsigned jobs = 1;
  std::string shard;
  std::uint64_t max_failures = 100;
  CLI::App* fuzz = app.add_subcommand("fuzz", "run a range of seeds");
  add_common(*fuzz, fuzz_flags);
  fuzz->add_option("--seeds", seeds, "how many seeds")->required();
  fuzz->add_option("--start", start, "first seed (default 0)");
  fuzz->add_option("--jobs", jobs, "parallel simulator threads");
  fuzz->add_option("--shard", shard, "i/n: run only seeds whose index % n == i");
  fuzz->add_option("--max-failures", max_failures, "stop after this many failures (0: never)");
  bool fuzz_shrink = false;
  fuzz->add_flag("--shrink", fuzz_shrink, "shrink the first failure (lowest seed) and print its minimal replay");
  add_limits(fuzz);

  common_flags shrink_flags;
  std::uint64_t shrink_seed = 0;
  CLI::App* shrink_cmd = app.add_subcommand(
      "shrink", "minimise a failing seed: fewer tasks/threads, faults, preemptions; prints the minimal replay");
  add_common(*shrink_cmd, shrink_flags);
  shrink_cmd->add_option("--seed", shrink_seed, "the failing seed")->required();
  add_limits(shrink_cmd);

  try {
    app.parse(argc, argv);
    if (list->parsed()) return cmd_list();
    if (run_cmd->parsed() || replay_cmd->parsed()) return cmd_run(program, run_flags, run_seed, trace_file, chrome_file);
    if (fuzz->parsed()) {
      return cmd_fuzz(program, fuzz_flags, seeds, start, jobs, shard, max_failures, fuzz_shrink, limits);
    }
    if (shrink_cmd->parsed()) {
      const scenario* s = find_scenario(shrink_flags.scenario);
      if (s == nullptr) return 2;
      const options o = to_options(shrink_flags);
      std::printf("weft-sim shrink: scenario=%s seed=%llu %s\n", s->name.c_str(),
                  static_cast<unsigned long long>(shrink_seed), describe(resolve(o, shrink_seed)).c_str());
      std::fflush(stdout);
      return report_shrink(program, *s, shrink_seed, o, limits);
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-sim: %s\n", e.what());
    return 2;
  }
  return 2;
}

}  // namespace weft::sim
