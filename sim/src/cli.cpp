// cli.cpp — the weft-sim command line: list, run, replay, fuzz, shrink.
//
// Every run prints its options first, then the knobs the scenario resolved, the trace hash, a
// replay command and the outcome. Wall-clock time appears only in throughput figures and progress
// bars (outside any simulation).
//
// Every number is taken as text and parsed by parse_integer / parse_options (option_texts.hpp,
// shared with replay records; strictly decimal, range-checked): CLI11's own conversion wraps `-1`
// and saturates `2^64` into an unsigned flag, and reads `010` as octal. A bad flag, or a bad
// record for `replay FILE`, ends the command before any run with one `weft-sim: ...` line naming
// the flag (or field) and what it accepts, and exit status exit_usage.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <weft/sim/confidence.hpp>
#include <weft/sim/options.hpp>
#include <weft/sim/probes.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "option_texts.hpp"
#include "record.hpp"
#include "seed_range.hpp"
#include "campaign_report.hpp"
#include "shrink.hpp"

namespace weft::sim {

namespace {

// Exit statuses (docs/simulator.md lists them).
constexpr int exit_pass = 0;
constexpr int exit_failed = 1;  // a run failed, fuzz found a failing seed, shrink had nothing to shrink
constexpr int exit_usage = 2;             // a bad flag or value (a malformed seed or shard, a range)
constexpr int exit_io = 3;                // an output file cannot be opened or written, a thread not started
constexpr int exit_unknown_scenario = 4;  // no scenario of that name, or none registered at all
constexpr int exit_unknown_knob = 5;      // --param names a knob the scenario does not declare
constexpr int exit_foreign_record = 6;    // a record from another build, without --force
constexpr int exit_bad_record = 7;        // a record that cannot be read, or is malformed or out of range

// An output file (--trace, --chrome-trace, --save) that cannot be opened for writing.
class unwritable_output : public invalid_options {
 public:
  using invalid_options::invalid_options;
};

// `fuzz --jobs`: each job is a host thread plus its simulator thread and their stacks; a larger
// count is a typo rather than a machine.
constexpr unsigned max_jobs = 256;

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

// A flag taken as text; `given` tells whether it was on the command line.
struct text_flag {
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option != nullptr && option->count() > 0; }
};

CLI::Option* add_text(CLI::App& app, text_flag& f, const std::string& name, const std::string& help,
                      const std::string& type, const std::string& shown_default = "") {
  f.option = app.add_option(name, f.text, help)->type_name(type);
  if (!shown_default.empty()) f.option->default_str(shown_default);
  return f.option;
}

// An on/off flag: given twice it is refused, as a repeated value flag is.
CLI::Option* add_switch(CLI::App& app, const std::string& name, bool& value, const std::string& help) {
  return app.add_flag(name, value, help)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

struct common_flags {
  std::string scenario;
  std::string strategy = "random";
  text_flag depth, pct_steps, step_budget, cores, preemptions;
  std::vector<std::string> faults;
  std::vector<std::string> params;
  bool swarm = false;
  bool check_determinism = false;
};

// `replay` takes --scenario or a record, so its --scenario is not required by the parser.
void add_common(CLI::App& app, common_flags& f, bool scenario_required = true) {
  const options defaults;
  app.add_option("--scenario", f.scenario, "scenario name (see `list`)")->required(scenario_required);
  app.add_option("--strategy", f.strategy, "random | pct")->check(CLI::IsMember({"random", "pct"}));
  add_text(app, f.depth, "--depth",
           cat("PCT bug depth d (d - 1 priority change points), in [", std::to_string(min_pct_depth), ", ",
               std::to_string(max_pct_depth), "]; only with --strategy pct"),
           "UINT", std::to_string(defaults.pct_depth));
  add_text(app, f.pct_steps, "--pct-steps", "PCT: change points are drawn from steps [1, k], k >= 1; only with --strategy pct",
           "UINT", std::to_string(defaults.pct_steps));
  add_text(app, f.step_budget, "--step-budget", "livelock: fail after this many scheduling points (>= 1)", "UINT",
           std::to_string(defaults.step_budget));
  add_text(app, f.cores, "--cores",
           cat("what hardware_concurrency() answers in the simulation, in [", std::to_string(min_cores), ", ",
               std::to_string(max_cores), "]"),
           "UINT", std::to_string(defaults.cores));
  add_text(app, f.preemptions, "--preemptions",
           "preemption bound: at most N switches away from a thread that could go on (default: none)", "UINT");
  app.add_option("--fault", f.faults, "KIND[=PROBABILITY], probability in [0, 1] (default 1), e.g. inbox_full=0.05 (repeatable)");
  app.add_option("--param", f.params, "NAME=INTEGER scenario knob, within the range `list` shows (repeatable)");
  add_switch(app, "--swarm", f.swarm, "each seed picks its own fault mix");
  add_switch(app, "--check-determinism", f.check_determinism, "run each seed twice and compare the traces");
}

// The options the flags describe; throws invalid_options for a bad value. The scenario's knob
// ranges are checked by validate(scenario, options).
options to_options(const common_flags& f, const scenario& s) {
  option_texts t;
  t.strategy = f.strategy;
  const std::pair<const text_flag*, std::optional<std::string>*> numbers[] = {
      {&f.depth, &t.depth},
      {&f.pct_steps, &t.pct_steps},
      {&f.step_budget, &t.step_budget},
      {&f.cores, &t.cores},
      {&f.preemptions, &t.preemptions},
  };
  for (const auto& [flag, text] : numbers) {
    if (flag->given()) *text = flag->text;
  }
  t.faults = f.faults;
  t.params = f.params;
  t.swarm = f.swarm;
  return parse_options(t, &s);
}

// The shrink limits as text (fuzz takes them only with --shrink).
struct limit_flags {
  text_flag max_runs, seed_tries, param_floor;
  bool same_failure = true;
};

void add_limits(CLI::App& app, limit_flags& f, CLI::Option* needs) {
  const shrink_limits defaults;
  CLI::Option* added[] = {
      add_text(app, f.max_runs, "--max-runs", "shrink: simulations the search may spend (>= 1)", "UINT",
               std::to_string(defaults.max_runs)),
      add_text(app, f.seed_tries, "--seed-tries", "shrink: seeds tried per smaller candidate (>= 1)", "UINT",
               std::to_string(defaults.seed_tries)),
      add_text(app, f.param_floor, "--param-floor",
               "shrink: lowest value a scenario knob is lowered to (never below the knob's own minimum)", "INT",
               std::to_string(defaults.param_floor)),
      add_switch(app, "!--any-failure", f.same_failure, "shrink: accept any failure, not only one of the original's kind"),
  };
  if (needs != nullptr) {
    for (CLI::Option* o : added) o->needs(needs);
  }
}

shrink_limits to_limits(const limit_flags& f) {
  shrink_limits l;
  if (f.max_runs.given()) l.max_runs = parse_integer("--max-runs", f.max_runs.text, min_shrink_runs, u64_max);
  if (f.seed_tries.given()) l.seed_tries = parse_integer("--seed-tries", f.seed_tries.text, min_seed_tries, u64_max);
  if (f.param_floor.given()) {
    l.param_floor = parse_integer("--param-floor", f.param_floor.text, std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::max());
  }
  l.same_failure = f.same_failure;
  return l;
}

// An output file. Its path is checked before any run, so one that cannot be written ends the
// command first; the file itself is opened (and truncated) only when its text is written, so a
// command refused for another flag leaves every file as it was.
struct output_file {
  std::string flag;
  std::string path;
  std::ofstream out;

  void open(const std::string& flag_name, const std::string& file) {
    flag = flag_name;
    path = file;
    if (path.empty()) throw invalid_options(flag, "expected a file path");
    const auto refuse = [&](int error) {
      throw unwritable_output(flag, cat("cannot open '", path, "' for writing: ", std::strerror(error)));
    };
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) refuse(EISDIR);
      if (::access(path.c_str(), W_OK) != 0) refuse(errno);
      return;
    }
    if (errno != ENOENT) refuse(errno);
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    const std::string dir = parent.empty() ? std::string(".") : parent.string();
    if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse(errno);
  }
  bool given() const noexcept { return !path.empty(); }
  // The stream to write the file's text to: the file opened now, truncated.
  std::ostream& begin() {
    out.open(path, std::ios::out | std::ios::trunc);
    return out;
  }
  // exit_pass, or exit_io with a message when the written text did not reach the file.
  int close() {
    const bool opened = out.is_open();
    out.close();
    if (opened && out) return exit_pass;
    std::fprintf(stderr, "weft-sim: %s: writing '%s' failed\n", flag.c_str(), path.c_str());
    return exit_io;
  }
  // Nothing to save. A record an earlier command left there would pass for this one's, so a
  // regular file goes; a special file (a device, a pipe) is no record and stays as it is.
  void discard() {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(path.c_str());
    std::printf("saved: nothing (no failing case); %s not written\n", path.c_str());
  }
};

// A path as the file it names: absolute, symbolic links of its existing part resolved.
std::filesystem::path where(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::weakly_canonical(std::filesystem::absolute(path, ignored), ignored).lexically_normal();
}

// Refuses two output flags that name one file: their texts would overwrite or mix with each other.
void check_distinct(std::initializer_list<const output_file*> files) {
  std::vector<const output_file*> given;
  for (const output_file* f : files) {
    if (f->given()) given.push_back(f);
  }
  for (std::size_t i = 0; i < given.size(); ++i) {
    for (std::size_t j = i + 1; j < given.size(); ++j) {
      const bool same = where(given[i]->path) == where(given[j]->path);
      if (same) {
        throw invalid_options(given[j]->flag, cat("'", given[j]->path, "' is also the file of ", given[i]->flag));
      }
    }
  }
}

// PCT's detection bound for runs of these options with at most `threads` threads and `steps` steps.
pct_bound pct_bound_of(const options& o, std::uint64_t threads, std::uint64_t steps) {
  return pct_detection_bound(o.pct_depth, threads, o.pct_steps, steps);
}

// `--save FILE`: the record of `r`, run as (s, seed, o) by `command`; exit_pass or exit_io.
int save_record(output_file& file, const char* command, const scenario& s, std::uint64_t seed, const options& o,
                bool passed, const std::string& failure, std::uint64_t trace_hash) {
  record rec;
  rec.build = build_id();
  rec.command = command;
  rec.scenario = s.name;
  rec.seed = seed;
  rec.opts = o;
  rec.opts.record_trace = false;
  rec.passed = passed;
  rec.failure = failure.substr(0, failure.find('\n'));
  rec.trace_hash = trace_hash;
  file.begin() << render_record(rec);
  const int written = file.close();
  if (written == exit_pass) std::printf("saved: %s (build %s)\n", file.path.c_str(), rec.build.c_str());
  return written;
}

std::string first_failure(const run_result& r) { return r.failures.empty() ? "" : r.failures.front(); }

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

// Shrinks (seed, o) and prints the report; returns the exit status of `shrink`. With `save`, the
// minimal case goes there (for `command`); when the seed passes, the file is removed.
int report_shrink(const std::string& program, const scenario& s, std::uint64_t seed, const options& o,
                  const shrink_limits& limits, output_file* save, const char* command) {
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
    if (save != nullptr) save->discard();
    return exit_failed;
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
  if (save != nullptr) {
    return save_record(*save, command, s, m.seed, m.opts, m.result.passed, first_failure(m.result), m.result.trace_hash);
  }
  return exit_pass;
}

int cmd_list() {
  for (const scenario* s : registry::global().all()) {
    std::printf("%-24s %s\n", s->name.c_str(), s->description.c_str());
    for (const knob& k : s->knobs) {
      const std::string range = cat("[", std::to_string(k.min), ", ", std::to_string(k.max), "]");
      std::printf("    --param %-16s %-14s %s\n", k.name.c_str(), range.c_str(), k.help.c_str());
    }
  }
  return exit_pass;
}

// The scenario and the validated options of a command; nullptr after the "no scenario" message.
// Throws invalid_options for a bad flag.
const scenario* prepare(const common_flags& f, options& o) {
  const scenario* s = find_scenario(f.scenario);
  if (s == nullptr) return nullptr;
  o = to_options(f, *s);
  validate(*s, o);
  return s;
}

struct run_flags {
  common_flags common;
  text_flag seed;
  text_flag trace;
  text_flag chrome;
  text_flag save;        // run only
  std::string record;    // replay only: a record FILE
  bool force = false;    // replay only: accept a record from another build
};

// One run of (s, seed, o) with the outputs `f` asks for; `rec`, when replaying a record, is
// compared with the result.
int run_case(const std::string& program, const scenario& s, std::uint64_t seed, options o, const run_flags& f,
             const record* rec) {
  output_file trace, chrome, save;
  if (f.trace.given()) trace.open("--trace", f.trace.text);
  if (f.chrome.given()) chrome.open("--chrome-trace", f.chrome.text);
  if (f.save.given()) save.open("--save", f.save.text);
  check_distinct({&trace, &chrome, &save});
  std::printf("weft-sim: scenario=%s seed=%llu %s\n", s.name.c_str(), static_cast<unsigned long long>(seed),
              describe(resolve(o, seed)).c_str());
  std::fflush(stdout);
  o.record_trace = f.trace.given() || f.chrome.given();
  run_result r;
  std::string divergence;
  if (f.common.check_determinism) {
    divergence = check_determinism(s, seed, o, r);
  } else {
    r = run(s, seed, o);
  }
  for (const auto& failure : r.failures) std::printf("failure: %s\n", failure.c_str());
  std::printf("params: %s\n", knob_list(r.params).c_str());
  if (!divergence.empty()) std::printf("determinism: DIVERGED, %s\n", divergence.c_str());
  int written = exit_pass;
  if (f.trace.given()) {
    write_text(trace.begin(), r.events);
    written = std::max(written, trace.close());
  }
  if (f.chrome.given()) {
    write_chrome(chrome.begin(), r.events, r.fiber_names, r.fiber_hosts, r.host_names);
    written = std::max(written, chrome.close());
  }
  std::printf("stats: steps=%llu switches=%llu preemptions=%llu threads=%llu faults=%llu virtual-ns=%lld\n",
              static_cast<unsigned long long>(r.steps), static_cast<unsigned long long>(r.switches),
              static_cast<unsigned long long>(r.preemptions), static_cast<unsigned long long>(r.fibers),
              static_cast<unsigned long long>(r.faults),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(r.virtual_elapsed).count()));
  std::printf("trace-hash: %s\n", hex16(r.trace_hash).c_str());
  probe_tally probes;
  probes.add(r);
  if (const std::string line = probes.describe(); !line.empty()) std::printf("%s\n", line.c_str());
  if (o.strategy == strategy_kind::pct) std::printf("%s\n", pct_bound_of(o, r.fibers, r.steps).describe(1).c_str());
  std::printf("replay: %s\n", replay_command(program, s.name, seed, o).c_str());
  const bool pass = r.passed && divergence.empty();
  if (rec != nullptr) {
    if (r.trace_hash == rec->trace_hash && pass == rec->passed) {
      std::printf("record: reproduced (trace-hash and outcome as recorded)\n");
    } else {
      std::printf("record: NOT reproduced: the record has trace-hash %s, outcome %s\n", hex16(rec->trace_hash).c_str(),
                  rec->passed ? "pass" : "fail");
    }
  }
  // A run's record is saved whatever the outcome: a passing one pins that schedule too.
  if (f.save.given()) {
    const std::string failure = divergence.empty() ? first_failure(r) : "nondeterministic: " + divergence;
    written = std::max(written, save_record(save, "run", s, seed, o, pass, failure, r.trace_hash));
  }
  std::printf("outcome: %s\n", pass ? "pass" : "fail");
  if (written != exit_pass) return written;
  return pass ? exit_pass : exit_failed;
}

int cmd_run(const std::string& program, const run_flags& f) {
  options o;
  const scenario* s = prepare(f.common, o);
  if (s == nullptr) return exit_unknown_scenario;
  const std::uint64_t seed = parse_integer("--seed", f.seed.text, std::uint64_t{0}, u64_max);
  return run_case(program, *s, seed, o, f, nullptr);
}

// The flags a record holds, which replay FILE does not take besides it.
constexpr const char* record_held_flags[] = {"--scenario", "--seed",        "--strategy", "--depth",
                                             "--pct-steps", "--step-budget", "--cores",    "--preemptions",
                                             "--fault",     "--param",       "--swarm"};

// `replay --scenario S --seed N ...` runs like `run`; `replay FILE` runs the record in FILE.
int cmd_replay(const std::string& program, const CLI::App& sub, const run_flags& f) {
  if (f.record.empty()) {
    if (f.force) throw invalid_options("--force", "applies only to a record FILE");
    for (const char* flag : {"--scenario", "--seed"}) {
      if (sub.count(flag) == 0) throw invalid_options(flag, "is required (or give a record FILE)");
    }
    return cmd_run(program, f);
  }
  for (const char* flag : record_held_flags) {
    if (sub.count(flag) != 0) {
      throw invalid_options(flag, "cannot be combined with a record FILE, which holds the scenario, seed and options");
    }
  }
  loaded_record l;
  try {
    l = load_record(read_record_file(f.record), build_id(), f.force);
  } catch (const foreign_record& e) {
    throw foreign_record("record", cat("'", one_line(f.record, 256), "': ", refusal_reason(e)));
  } catch (const invalid_options& e) {
    throw invalid_options("record", cat("'", one_line(f.record, 256), "': ", refusal_reason(e)));
  }
  std::printf("record: %s: written by %s, build %s%s\n", f.record.c_str(), l.rec.command.c_str(), l.rec.build.c_str(),
              l.rec.build == build_id() ? " (this build)" : cat(" (this is build ", build_id(), "; --force)").c_str());
  return run_case(program, *l.scn, l.rec.seed, l.rec.opts, f, &l.rec);
}

struct fuzz_flags {
  common_flags common;
  text_flag seeds;
  text_flag start;
  text_flag jobs;
  text_flag shard;
  text_flag max_failures;
  text_flag save;
  bool shrink = false;
  bool json = false;  // JSON lines on stdout (campaign_report.hpp) instead of the text report
  limit_flags limits;
};

// The seeds of --seeds/--start/--shard, checked: at least one seed, no seed past 2^64 - 1, a
// shard i/n with i < n <= seeds (every shard of the set gets a seed).
seed_range to_seed_range(const fuzz_flags& f) {
  const std::uint64_t start = f.start.given() ? parse_integer("--start", f.start.text, std::uint64_t{0}, u64_max) : 0;
  const std::uint64_t seeds = parse_integer("--seeds", f.seeds.text, std::uint64_t{1}, u64_max);
  // start + seeds - 1 must not pass the largest seed.
  if (seeds - 1 > u64_max - start) {
    throw invalid_options("--seeds", cat(f.seeds.text, " seeds from --start ", std::to_string(start),
                                         " run past seed 2^64 - 1; accepted: [1, ",
                                         std::to_string(u64_max - start + 1), "]"));
  }
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  if (f.shard.given()) {
    const auto slash = f.shard.text.find('/');
    if (slash == std::string::npos) {
      throw invalid_options("--shard", cat("'", f.shard.text, "' is not i/n (e.g. 0/4)"));
    }
    count = parse_integer("--shard", f.shard.text.substr(slash + 1), std::uint64_t{1}, seeds);
    index = parse_integer("--shard", f.shard.text.substr(0, slash), std::uint64_t{0}, count - 1);
  }
  return seed_range(start, seeds, index, count);
}

// One fuzz campaign: `range`'s seeds run by `jobs` simulator threads, each taking the next seed
// index from a shared counter (no list of seeds is kept), until every seed ran, --max-failures
// failures were found, or a job caught an exception.
class campaign {
 public:
  struct failure {
    std::uint64_t seed;
    std::string why;  // one line; a divergence adds the two runs' diverging events, a line each
    std::uint64_t trace_hash;
  };

  campaign(const scenario& s, const options& o, const seed_range& range, bool determinism,
           std::uint64_t max_failures)
      : scenario_(s), options_(o), range_(range), determinism_(determinism), max_failures_(max_failures) {}

  // Runs the campaign on `jobs` threads, with a progress bar when stderr is a terminal.
  void run(unsigned jobs) {
    std::vector<std::thread> pool;  // seam-ok: simulator host code, outside any simulated run
    for (unsigned j = 0; j < jobs; ++j) {
      try {
        pool.emplace_back([this] { run_seeds(); });
      } catch (const std::system_error& e) {
        std::lock_guard<std::mutex> hold(lock_);
        worker_error_ = cat("--jobs ", std::to_string(jobs), ": could not start worker thread ",
                            std::to_string(j + 1), ": ", e.what());
        stop_.store(true, std::memory_order_relaxed);
        break;
      }
    }
    if (isatty(STDERR_FILENO) != 0) show_progress();
    for (auto& t : pool) t.join();
    std::sort(failures_.begin(), failures_.end(),
              [](const failure& a, const failure& b) { return a.seed < b.seed; });
    // Seeds other jobs had taken still finished after the M-th failure stopped the campaign, and
    // some may have failed too. The seeds that ran are a prefix of the range holding at least M
    // failures, so its first M in seed order are the range's first M at any --jobs.
    if (max_failures_ != 0 && failures_.size() > max_failures_) failures_.resize(max_failures_);
  }

  // After run(): the failures by seed, the seeds that ran, their steps, a job's exception if any.
  const std::vector<failure>& failures() const { return failures_; }
  std::uint64_t finished() const { return finished_.load(std::memory_order_relaxed); }
  std::uint64_t steps() const { return total_steps_.load(std::memory_order_relaxed); }
  // The longest run and the most threads of any run (PCT's k and n as measured).
  std::uint64_t most_steps() const { return most_steps_.load(std::memory_order_relaxed); }
  std::uint64_t most_threads() const { return most_threads_.load(std::memory_order_relaxed); }
  const std::string& worker_error() const { return worker_error_; }
  // After run(): what the program's WEFT_SIM_PROBE sites saw over the seeds that ran.
  const probe_tally& probes() const { return probes_; }

 private:
  // One job: seeds until the range is used up or the campaign stops.
  void run_seeds() {
    try {
      for (;;) {
        if (stop_.load(std::memory_order_relaxed)) return;
        const std::uint64_t j = next_.fetch_add(1, std::memory_order_relaxed);
        if (j >= range_.size()) return;
        run_seed(range_.at(j));
        finished_.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> hold(lock_);
      if (worker_error_.empty()) worker_error_ = e.what();
      stop_.store(true, std::memory_order_relaxed);
    }
  }

  void run_seed(std::uint64_t seed) {
    run_result r;
    std::string why;
    if (determinism_) {
      const std::string d = check_determinism(scenario_, seed, options_, r);
      if (!d.empty()) why = "nondeterministic: " + d;
    } else {
      r = weft::sim::run(scenario_, seed, options_);
    }
    total_steps_.fetch_add(r.steps, std::memory_order_relaxed);
    raise_to(most_steps_, r.steps);
    raise_to(most_threads_, r.fibers);
    if (!r.probe_hits.empty()) {
      std::lock_guard<std::mutex> hold(lock_);
      probes_.add(r);
    }
    if (why.empty() && !r.passed) {
      why = r.failures.empty() ? "failed" : r.failures.front();
      why = why.substr(0, why.find('\n'));
    }
    if (why.empty()) return;
    std::lock_guard<std::mutex> hold(lock_);
    failures_.push_back({seed, why, r.trace_hash});
    if (max_failures_ != 0 && failures_.size() >= max_failures_) stop_.store(true, std::memory_order_relaxed);
  }

  void show_progress() {
    const std::uint64_t total = range_.size();
    while (finished() < total && !stop_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::size_t failed;
      {
        std::lock_guard<std::mutex> hold(lock_);
        failed = failures_.size();
      }
      draw_bar(finished(), total, cat("seeds, ", std::to_string(failed), " failures"));
    }
    std::fprintf(stderr, "\n");
  }

  const scenario& scenario_;
  const options& options_;
  const seed_range range_;
  const bool determinism_;
  const std::uint64_t max_failures_;
  std::mutex lock_;
  std::vector<failure> failures_;  // under lock_ until run() returns
  probe_tally probes_;             // under lock_ until run() returns
  std::string worker_error_;       // under lock_: the first exception a job caught
  // Counters only: no other data is published through them (failures_ and worker_error_ are under
  // lock_, and the pool is joined before the totals are read), so relaxed is enough.
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> finished_{0};
  std::atomic<std::uint64_t> total_steps_{0};
  std::atomic<std::uint64_t> most_steps_{0};
  std::atomic<std::uint64_t> most_threads_{0};
  std::atomic<bool> stop_{false};

  static void raise_to(std::atomic<std::uint64_t>& most, std::uint64_t value) {
    std::uint64_t seen = most.load(std::memory_order_relaxed);
    while (seen < value && !most.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
  }
};

void print_fuzz_header(const fuzz_flags& f, const seed_range& range, unsigned jobs, const options& o) {
  std::printf("weft-sim fuzz: scenario=%s seeds=%llu..%llu shard=%llu/%llu jobs=%u %s%s\n", f.common.scenario.c_str(),
              static_cast<unsigned long long>(range.first()), static_cast<unsigned long long>(range.last()),
              static_cast<unsigned long long>(range.shard()), static_cast<unsigned long long>(range.shards()), jobs,
              describe(o).c_str(),
              f.common.check_determinism ? " check-determinism=on" : "");
}

// A finished campaign, for its reports.
struct fuzz_run {
  const scenario& s;
  const options& o;
  const campaign& c;
  std::uint64_t ran;  // seeds that ran
  double seconds;     // wall time
  unsigned jobs;
};

// The JSON lines of a finished campaign (campaign_report.hpp).
int report_fuzz_json(const std::string& program, const fuzz_flags& f, const fuzz_run& r) {
  const seed_range range = to_seed_range(f);
  const campaign_summary summary{f.common.scenario, replay_arguments(r.o),   range.first(), range.last() - range.first() + 1,
                                 range.shard(),     range.shards(),         r.ran,         r.c.failures().size(),
                                 r.ran == range.size()};
  for (const auto& fl : r.c.failures()) {
    const campaign_failure failure{fl.seed, fl.why, replay_command(program, f.common.scenario, fl.seed, r.o)};
    std::printf("%s\n", failure_line(f.common.scenario, failure).c_str());
  }
  for (const probe_coverage& p : r.c.probes().coverage()) std::printf("%s\n", probe_line(f.common.scenario, p).c_str());
  std::printf("%s\n", summary_line(summary).c_str());
  return r.c.failures().empty() ? exit_pass : exit_failed;
}

// The text report of a finished campaign, then the shrink and the record it asks for.
int report_fuzz(const std::string& program, const fuzz_flags& f, const fuzz_run& r, const shrink_limits& limits,
                output_file* saving) {
  const scenario* s = &r.s;
  const options& o = r.o;
  const campaign& c = r.c;
  const std::uint64_t ran = r.ran;
  const seed_range range = to_seed_range(f);
  for (const auto& fl : c.failures()) {
    std::printf("fail: seed=%llu: %s\n", static_cast<unsigned long long>(fl.seed), fl.why.c_str());
    std::printf("  replay: %s\n", replay_command(program, f.common.scenario, fl.seed, o).c_str());
  }
  if (ran < range.size()) {
    std::printf("fuzz: stopped after %zu failures (--max-failures)\n", c.failures().size());
  }
  const double steps = static_cast<double>(c.steps());
  std::printf("stats: steps=%.0f steps/s=%.0f seeds/s/job=%.0f wall-s=%.3f jobs=%u\n", steps,
              r.seconds > 0 ? steps / r.seconds : 0.0, r.seconds > 0 ? static_cast<double>(ran) / r.seconds / r.jobs : 0.0,
              r.seconds, r.jobs);
  std::printf("fuzz: %llu seeds, %zu failures, %.0f seeds/s\n", static_cast<unsigned long long>(ran),
              c.failures().size(), r.seconds > 0 ? static_cast<double>(ran) / r.seconds : 0.0);
  if (o.strategy == strategy_kind::pct) {
    std::printf("%s\n", pct_bound_of(o, c.most_threads(), c.most_steps()).describe(ran).c_str());
  }
  if (const std::string probes = c.probes().describe(); !probes.empty()) std::printf("%s\n", probes.c_str());
  int written = exit_pass;
  if (c.failures().empty()) {
    if (saving != nullptr) saving->discard();
  } else if (f.shrink) {
    const std::uint64_t first = c.failures().front().seed;
    std::printf("fuzz: shrinking the first failure (seed %llu)\n", static_cast<unsigned long long>(first));
    std::fflush(stdout);
    written = std::max(written, report_shrink(program, *s, first, o, limits, saving, "fuzz"));
    if (written == exit_failed) written = exit_pass;  // the lowest seed no longer failed; nothing was saved
  } else if (saving != nullptr) {
    const campaign::failure& first = c.failures().front();
    written = save_record(*saving, "fuzz", *s, first.seed, o, false, first.why, first.trace_hash);
  }
  if (written != exit_pass) return written;
  return c.failures().empty() ? exit_pass : exit_failed;
}

// Flags of fuzz that do not go together.
void check_fuzz_combinations(const fuzz_flags& f) {
  if (f.shrink && f.common.check_determinism) {
    throw invalid_options("--shrink", "cannot be combined with --check-determinism (a divergence has no smaller case)");
  }
  if (f.shrink && f.json) {
    throw invalid_options("--shrink", "cannot be combined with --json (its report is text; shrink a seed the JSON names)");
  }
  if (f.save.given() && f.json) {
    throw invalid_options("--save", "cannot be combined with --json (stdout is the JSON lines; save with run --save)");
  }
}

int cmd_fuzz(const std::string& program, const fuzz_flags& f) {
  options o;
  const scenario* s = prepare(f.common, o);
  if (s == nullptr) return exit_unknown_scenario;
  const seed_range range = to_seed_range(f);
  const unsigned jobs = f.jobs.given() ? parse_integer("--jobs", f.jobs.text, 1u, max_jobs) : 1u;
  const std::uint64_t max_failures =
      f.max_failures.given() ? parse_integer("--max-failures", f.max_failures.text, std::uint64_t{0}, u64_max) : 100;
  const shrink_limits limits = to_limits(f.limits);
  check_fuzz_combinations(f);
  output_file save;
  if (f.save.given()) save.open("--save", f.save.text);
  if (!f.json) print_fuzz_header(f, range, jobs, o);
  std::fflush(stdout);

  campaign c(*s, o, range, f.common.check_determinism, max_failures);
  const auto began = std::chrono::steady_clock::now();  // seam-ok: throughput only, host code; never enters a run
  c.run(jobs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();  // seam-ok: simulator host code, outside any simulated run
  const fuzz_run r{*s, o, c, c.finished(), seconds, jobs};
  if (!c.worker_error().empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-sim: fuzz stopped after %llu seeds: %s\n", static_cast<unsigned long long>(r.ran),
                 c.worker_error().c_str());
    return exit_io;
  }
  if (f.json) return report_fuzz_json(program, f, r);
  return report_fuzz(program, f, r, limits, f.save.given() ? &save : nullptr);
}

struct shrink_flags {
  common_flags common;
  text_flag seed;
  text_flag save;
  limit_flags limits;
};

int cmd_shrink(const std::string& program, const shrink_flags& f) {
  options o;
  const scenario* s = prepare(f.common, o);
  if (s == nullptr) return exit_unknown_scenario;
  const std::uint64_t seed = parse_integer("--seed", f.seed.text, std::uint64_t{0}, u64_max);
  const shrink_limits limits = to_limits(f.limits);
  if (f.common.check_determinism) {
    throw invalid_options("--check-determinism", "applies to run, replay and fuzz, not to shrink");
  }
  std::printf("weft-sim shrink: scenario=%s seed=%llu %s\n", s->name.c_str(), static_cast<unsigned long long>(seed),
              describe(resolve(o, seed)).c_str());
  std::fflush(stdout);
  output_file save;
  if (f.save.given()) save.open("--save", f.save.text);
  return report_shrink(program, *s, seed, o, limits, f.save.given() ? &save : nullptr, "shrink");
}

}  // namespace

int cli_main(int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : "weft-sim";
  CLI::App app{"weft-sim: deterministic simulation of weft programs"};
  app.require_subcommand(1);
  app.footer("Exit status: 0 pass, 1 a run failed (fuzz: a seed failed; shrink: the seed passes), 2 a bad flag or "
             "value (a malformed seed or shard, a value out of range, flags that do not combine), 3 an output file "
             "cannot be opened or written, or a worker thread not started, 4 an unknown scenario (or none "
             "registered, or one name registered twice, or a doc or knobs for no scenario), 5 a --param knob the scenario does not declare, 6 a record from another build (without "
             "--force), 7 a record that cannot be read or is malformed, truncated, of another version or out of "
             "range; merge: 2 for inputs that are not one campaign's shards.\n"
             "--save FILE (run, fuzz, shrink) writes a replay record: run's whatever the outcome, fuzz's lowest "
             "failing seed (with --shrink its minimal case), shrink's minimal case; with nothing to save no FILE "
             "is left. `replay FILE` runs it (see docs/simulator.md, \"Replay records\").");

  CLI::App* list = app.add_subcommand("list", "list the registered scenarios and their knobs' ranges");

  const auto seed_help = cat("the seed, in [0, ", std::to_string(u64_max), "]");
  // run and replay take the same flags, each into its own run_flags (a text_flag knows its option).
  // replay takes a record FILE instead of --scenario and --seed: cmd_replay checks which it got.
  auto add_run_like = [&](CLI::App* sub, run_flags& f, bool is_run) {
    add_common(*sub, f.common, is_run);
    add_text(*sub, f.seed, "--seed", seed_help, "UINT")->required(is_run);
    add_text(*sub, f.trace, "--trace", "write the event trace as text", "FILE");
    add_text(*sub, f.chrome, "--chrome-trace", "write Chrome Trace Event JSON (Perfetto)", "FILE");
  };
  const std::string save_help = "write a replay record of ";
  run_flags run, replay;
  CLI::App* run_cmd = app.add_subcommand("run", "run one seed");
  add_run_like(run_cmd, run, true);
  add_text(*run_cmd, run.save, "--save", save_help + "this run (pass or fail)", "FILE");
  CLI::App* replay_cmd = app.add_subcommand(
      "replay", "replay a record FILE (--save), or a seed given as flags (the command a failure printed)");
  add_run_like(replay_cmd, replay, false);
  replay_cmd->add_option("record", replay.record, "a record written by --save (instead of --scenario, --seed, ...)")
      ->type_name("FILE");
  add_switch(*replay_cmd, "--force", replay.force, "replay a record written by another build");

  fuzz_flags fuzz;
  CLI::App* fuzz_cmd = app.add_subcommand("fuzz", "run a range of seeds");
  add_common(*fuzz_cmd, fuzz.common);
  add_text(*fuzz_cmd, fuzz.seeds, "--seeds", "how many seeds, >= 1 (start + seeds - 1 <= 2^64 - 1)", "UINT")
      ->required();
  add_text(*fuzz_cmd, fuzz.start, "--start", "first seed", "UINT", "0");
  add_text(*fuzz_cmd, fuzz.jobs, "--jobs", cat("parallel simulator threads, in [1, ", std::to_string(max_jobs), "]"),
           "UINT", "1");
  add_text(*fuzz_cmd, fuzz.shard, "--shard", "i/n: run only seeds whose index % n == i (i < n <= seeds)", "I/N");
  add_text(*fuzz_cmd, fuzz.max_failures, "--max-failures", "stop after this many failures (0: never)", "UINT", "100");
  add_text(*fuzz_cmd, fuzz.save, "--save", save_help + "the lowest failing seed (with --shrink: its minimal case)",
           "FILE");
  CLI::Option* shrink_flag =
      add_switch(*fuzz_cmd, "--shrink", fuzz.shrink, "shrink the first failure (lowest seed) and print its minimal replay");
  add_limits(*fuzz_cmd, fuzz.limits, shrink_flag);
  add_switch(*fuzz_cmd, "--json", fuzz.json,
                     "print one JSON line per failure and a summary line instead of the text report (for `merge`)");

  std::vector<std::string> merge_files;
  bool merge_json = false;
  CLI::App* merge_cmd = app.add_subcommand(
      "merge", "combine the `fuzz --json` outputs of a sharded campaign: every failure, and each distinct one's lowest seed");
  merge_cmd->add_option("files", merge_files, "one `fuzz --json` output per shard")->required();
  add_switch(*merge_cmd, "--json", merge_json, "print the merged report as one JSON object");

  shrink_flags shrink;
  CLI::App* shrink_cmd = app.add_subcommand(
      "shrink", "minimise a failing seed: fewer tasks/threads, faults, preemptions; prints the minimal replay");
  add_common(*shrink_cmd, shrink.common);
  add_text(*shrink_cmd, shrink.seed, "--seed", cat("the failing ", seed_help.substr(4)), "UINT")->required();
  add_limits(*shrink_cmd, shrink.limits, nullptr);
  add_text(*shrink_cmd, shrink.save, "--save", save_help + "the minimal case", "FILE");

  try {
    app.parse(argc, argv);
    if (merge_cmd->parsed()) return merge_campaigns(merge_files, merge_json);  // reads files, runs nothing
    if (const std::vector<std::string> problems = registry::global().problems(); !problems.empty()) {
      for (const std::string& p : problems) std::fprintf(stderr, "weft-sim: this binary's scenarios: %s\n", p.c_str());
      return exit_unknown_scenario;
    }
    if (registry::global().all().empty()) {
      // The usual cause: the scenarios sit in a static library and nothing references their
      // objects, so the linker dropped them with their registrations.
      std::fprintf(stderr,
                   "weft-sim: this binary registers no scenario: link the object files that define "
                   "WEFT_SIM_SCENARIO into it (from a static library, with -Wl,--whole-archive; see "
                   "docs/simulator.md)\n");
      return exit_unknown_scenario;
    }
    if (list->parsed()) return cmd_list();
    if (run_cmd->parsed()) return cmd_run(program, run);
    if (replay_cmd->parsed()) return cmd_replay(program, *replay_cmd, replay);
    if (fuzz_cmd->parsed()) return cmd_fuzz(program, fuzz);
    if (shrink_cmd->parsed()) return cmd_shrink(program, shrink);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; its own codes (100+) are folded into the one usage status.
    const int code = app.exit(e);
    return code == 0 ? exit_pass : exit_usage;
  } catch (const invalid_options& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-sim: %s\n", e.what());
    if (dynamic_cast<const foreign_record*>(&e) != nullptr) return exit_foreign_record;
    if (dynamic_cast<const unknown_knob*>(&e) != nullptr) return exit_unknown_knob;
    if (dynamic_cast<const unwritable_output*>(&e) != nullptr) return exit_io;
    return e.flag() == "record" ? exit_bad_record : exit_usage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-sim: %s\n", e.what());
    return exit_io;
  }
  return exit_usage;
}

}  // namespace weft::sim
