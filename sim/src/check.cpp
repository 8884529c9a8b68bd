// check.cpp — check(): a body run as a scenario over a range of seeds, shrunk and traced when it
// fails (weft/sim/check.hpp).
#include <weft/sim/check.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <weft/sim/confidence.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/trace.hpp>

#include "option_texts.hpp"
#include "record.hpp"
#include "shrink.hpp"

namespace weft::sim {

namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

std::optional<std::string> environment(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// The check as the environment amends it.
struct plan {
  std::uint64_t start = 0;
  std::uint64_t seeds = 0;
  bool exact = false;           // WEFT_SIM_SEED: one seed, no shrinking
  bool strategy_from_environment = false;
  std::string record_file;      // WEFT_SIM_RECORD, when the seed and options came from a record
  std::optional<record> replayed;  // that record
  options sim;
  std::filesystem::path trace_dir;
};

// WEFT_SIM_RECORD: a record this build wrote for this check, read with the CLI's checks.
record record_of(const check_options& o, const std::string& path) {
  for (const char* other : {"WEFT_SIM_SEED", "WEFT_SIM_SEEDS", "WEFT_SIM_STRATEGY"}) {
    if (environment(other)) {
      throw invalid_options("WEFT_SIM_RECORD", std::string("cannot be combined with ") + other +
                                                   " (the record holds the seed and options)");
    }
  }
  record rec;
  try {
    rec = parse_record(read_record_file(path), build_id(), /*force=*/false);
  } catch (const invalid_options& e) {
    throw invalid_options("WEFT_SIM_RECORD", "'" + one_line(path, 256) + "': " + refusal_reason(e));
  }
  if (rec.scenario != o.name) {
    throw invalid_options("WEFT_SIM_RECORD", "'" + one_line(path, 256) + "' is a record of '" +
                                                 one_line(rec.scenario, 64) + "', not of '" + o.name + "'");
  }
  return rec;
}

plan plan_of(const check_options& o) {
  plan p;
  p.start = o.start;
  p.seeds = o.seeds;
  p.sim = o.sim;
  if (auto v = environment("WEFT_SIM_RECORD")) {
    const record rec = record_of(o, *v);
    p.start = rec.seed;
    p.seeds = 1;
    p.exact = true;
    p.sim = rec.opts;
    p.record_file = *v;
    p.replayed = rec;
  }
  if (auto v = environment("WEFT_SIM_SEEDS")) p.seeds = parse_integer<std::uint64_t>("WEFT_SIM_SEEDS", *v, 1, u64_max);
  if (auto v = environment("WEFT_SIM_SEED")) {
    p.start = parse_integer<std::uint64_t>("WEFT_SIM_SEED", *v, 0, u64_max);
    p.seeds = 1;
    p.exact = true;
  }
  if (auto v = environment("WEFT_SIM_STRATEGY")) {
    if (*v == "random") {
      p.sim.strategy = strategy_kind::random;
    } else if (*v == "pct") {
      p.sim.strategy = strategy_kind::pct;
    } else {
      throw invalid_options("WEFT_SIM_STRATEGY", "'" + *v + "' is neither random nor pct");
    }
    p.strategy_from_environment = true;
  }
  if (auto v = environment("WEFT_SIM_TRACE_DIR")) {
    std::error_code ec;
    if (v->empty() || !std::filesystem::is_directory(*v, ec)) {
      throw invalid_options("WEFT_SIM_TRACE_DIR", "'" + *v + "' is not an existing directory");
    }
    p.trace_dir = *v;
  } else {
    std::error_code ec;
    p.trace_dir = std::filesystem::temp_directory_path(ec);
    if (ec) p.trace_dir = ".";
  }
  if (p.seeds == 0) throw invalid_options("seeds", "0 is outside the accepted range [1, 2^64 - 1]");
  if (p.seeds - 1 > u64_max - p.start) {
    throw invalid_options("seeds", "start + seeds - 1 passes 2^64 - 1 (start " + std::to_string(p.start) + ", seeds " +
                                       std::to_string(p.seeds) + ")");
  }
  if (o.shrink_runs < min_shrink_runs) {
    throw invalid_options("shrink_runs", "0 is outside the accepted range [1, 2^64 - 1]");
  }
  return p;
}

// The file name part of a check's name: letters, digits, '-', '_' and '.' kept, others '_'.
std::string file_safe(const std::string& name) {
  std::string out = name.empty() ? "check" : name;
  for (char& c : out) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.';
    if (!keep) c = '_';
  }
  return out;
}

// Writes `text` to `path`: `written` gets the path, or `error` why it could not.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& text,
                std::string& written, std::string& error) {
  std::ofstream out(path);
  if (out) text(out);
  out.close();
  if (!out) {
    error = "could not write '" + path.string() + "'";
    return;
  }
  written = path.string();
}

// The failing run's Chrome trace, from a rerun of its seed (returned, to compare), and its replay
// record, side by side in the trace directory. The record holds the failing run's outcome and
// trace hash, so replaying it shows whether a rerun still goes that way.
run_result write_trace_and_record(const scenario& s, std::uint64_t seed, options o, std::uint64_t failing_hash,
                                  const plan& p, check_result& r) {
  o.record_trace = true;
  run_result traced = run(s, seed, o);
  const std::string stem = file_safe(s.name) + "-seed-" + std::to_string(seed);
  write_file(
      p.trace_dir / (stem + ".json"), [&](std::ostream& out) { write_chrome(out, traced.events, traced.fiber_names, traced.fiber_hosts, traced.host_names); },
      r.trace_path, r.trace_error);
  record rec;
  rec.build = build_id();
  rec.command = "check";
  rec.scenario = s.name;
  rec.seed = seed;
  rec.opts = o;
  rec.opts.record_trace = false;
  rec.passed = false;
  rec.failure = r.failures.empty() ? "" : r.failures.front().substr(0, r.failures.front().find('\n'));
  rec.trace_hash = failing_hash;
  write_file(
      p.trace_dir / (stem + ".weft-sim.json"), [&](std::ostream& out) { out << render_record(rec); }, r.record_path,
      r.record_error);
  return traced;
}

// What a rerun of the failing seed that differs from the failing run says about the body.
constexpr const char* nondeterministic_body =
    "the body is nondeterministic: the same seed and options give different runs, so it depends on state that "
    "outlives a run (statics, globals, std::rand) or on real time or real threads";

std::string rerun_command(const check_options& o) {
  if (!o.rerun.empty()) return o.rerun;
  return shell_word(program_invocation_name);  // glibc: argv[0] as the program was started
}

}  // namespace

std::string shell_word(std::string_view word) {
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./=:+-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string check_result::message() const {
  if (passed) {
    const std::string coverage = probes.describe();
    return "passed " + std::to_string(seeds_run) + " seeds" + (pct_bound.empty() ? "" : "\n" + pct_bound) +
           (coverage.empty() ? "" : "\n" + coverage);
  }
  std::string m = "failed at seed " + std::to_string(failing_seed) + " (after " + std::to_string(seeds_run) +
                  " seeds)" + (reproduced ? "" : ", but not reproducibly") + ":\n";
  for (const std::string& f : failures) m += "  " + f + "\n";
  if (!reproduced) m += divergence + "\n  " + nondeterministic_body + "\n";
  if (!shrunk.empty()) {
    m += "shrunk:";
    for (const std::string& step : shrunk) m += " " + step + ";";
    m += "\n  minimal: " + minimal_replay + "\n";
  }
  if (!trace_path.empty()) m += "trace: " + trace_path + (reproduced ? "" : " (of a rerun of the seed)") + "\n";
  if (!trace_error.empty()) m += "trace: " + trace_error + "\n";
  if (!record_path.empty()) m += "record: " + record_path + "\n";
  if (!record_error.empty()) m += "record: " + record_error + "\n";
  // A line that reran a nondeterministic failure would mostly pass: it is not offered as one.
  m += (reproduced ? "reproduce: " : "seed that failed once (not a reproduction): ") + reproduction;
  return m;
}

check_result check(const check_options& o, std::function<void(context&)> body) {
  const plan p = plan_of(o);
  scenario s{o.name, "", std::move(body), o.knobs};
  std::sort(s.knobs.begin(), s.knobs.end(), [](const knob& a, const knob& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < s.knobs.size(); ++i) {
    const knob& k = s.knobs[i];
    if (k.min > k.max) throw invalid_options("knobs", "'" + k.name + "' has min > max");
    if (i > 0 && s.knobs[i - 1].name == k.name) throw invalid_options("knobs", "'" + k.name + "' is declared twice");
  }
  validate(s, p.sim);  // before the first run, so a bad option is not a failing seed

  check_result r;
  std::uint64_t most_threads = 0;
  std::uint64_t most_steps = 0;
  std::uint64_t last_hash = 0;  // of the last run: the failing one, or a record's replay
  for (std::uint64_t i = 0; i < p.seeds; ++i) {
    const std::uint64_t seed = p.start + i;
    const run_result result = run(s, seed, p.sim);
    ++r.seeds_run;
    most_threads = std::max(most_threads, result.fibers);
    most_steps = std::max(most_steps, result.steps);
    r.probes.add(result);
    last_hash = result.trace_hash;
    if (result.passed) continue;
    r.passed = false;
    r.failing_seed = seed;
    r.failures = result.failures;
    break;
  }
  if (p.sim.strategy == strategy_kind::pct) {
    r.pct_bound = pct_detection_bound(p.sim.pct_depth, most_threads, p.sim.pct_steps, most_steps).describe(r.seeds_run);
  }
  // Same build, seed and options as the record (record_of checked them), and yet another run: the
  // body's doing.
  const bool replay_diverged = p.replayed && (r.passed != p.replayed->passed || last_hash != p.replayed->trace_hash);
  if (r.passed && !replay_diverged) return r;
  if (replay_diverged) {
    const record& rec = *p.replayed;
    r.reproduced = false;
    r.divergence = "record: NOT reproduced: the record has trace-hash " + hex16(rec.trace_hash) + ", outcome " +
                   (rec.passed ? "pass" : "fail") + "; this run has trace-hash " + hex16(last_hash) + ", outcome " +
                   (r.passed ? "pass" : "fail");
    if (r.passed && !rec.failure.empty()) r.failures = {rec.failure};
    r.passed = false;
    r.failing_seed = rec.seed;
    r.record_path = p.record_file;  // left as it is: a new record of this run would replace it
  }

  // Every option the code does not set itself goes into the line: the record's (which hold more
  // than the seed), or the strategy the environment chose.
  if (!p.record_file.empty()) {
    r.reproduction = "WEFT_SIM_RECORD=" + shell_word(p.record_file) + " ";
  } else {
    r.reproduction = "WEFT_SIM_SEED=" + std::to_string(r.failing_seed) + " ";
    if (p.strategy_from_environment) r.reproduction += std::string("WEFT_SIM_STRATEGY=") + to_string(p.sim.strategy) + " ";
  }
  r.reproduction += rerun_command(o);
  if (replay_diverged) return r;

  // Every rerun of the failing seed must go the same way; the first that does not is reported.
  const auto compare_rerun = [&](bool passed, std::uint64_t hash) {
    if (!r.reproduced || (!passed && hash == last_hash)) return;
    r.reproduced = false;
    r.divergence = "not reproduced: a rerun of seed " + std::to_string(r.failing_seed) + " " +
                   (passed ? "passed" : "failed") + " with trace-hash " + hex16(hash) + "; the failing run had " +
                   hex16(last_hash);
  };
  if (o.shrink && !p.exact) {
    shrink_limits limits;
    limits.max_runs = o.shrink_runs;
    const shrink_result sr = sim::shrink(s, r.failing_seed, p.sim, limits);
    compare_rerun(sr.original.result.passed, sr.original.result.trace_hash);  // its first run is the seed's rerun
    if (r.reproduced && !sr.log.empty()) {
      r.shrunk = sr.log;
      r.minimal_replay = "--seed " + std::to_string(sr.minimal.seed) + " " + replay_arguments(sr.minimal.opts);
    }
  }
  const run_result traced = write_trace_and_record(s, r.failing_seed, p.sim, last_hash, p, r);
  compare_rerun(traced.passed, traced.trace_hash);
  return r;
}

}  // namespace weft::sim
