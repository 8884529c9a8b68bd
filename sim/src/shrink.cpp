// shrink.cpp — the shrinker (see shrink.hpp).
#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "shrink.hpp"

#include "campaign_report.hpp"

namespace weft::sim {

std::string failure_signature(const run_result& r) {
  if (r.passed) return "";
  if (r.failures.empty()) return "failed";
  return failure_kind(r.failures.front());
}

void validate(const shrink_limits& limits) {
  check_range("--max-runs", limits.max_runs, min_shrink_runs);
  check_range("--seed-tries", limits.seed_tries, min_seed_tries);
}

namespace {

// Concatenation by appending (GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O3).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

std::string fault_list(const options& o) {
  std::string s;
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    if (o.faults.rate_ppm[k] == 0) continue;
    if (!s.empty()) s += ",";
    s += platform::fault_name(static_cast<platform::fault>(k));
    s += cat("=", std::to_string(o.faults.rate_ppm[k]), "ppm");
  }
  if (o.swarm) s += s.empty() ? "swarm" : ",swarm";
  return s.empty() ? "none" : s;
}

class searcher {
 public:
  searcher(const scenario& s, const shrink_limits& limits,
           const std::function<void(std::uint64_t, std::uint64_t)>& progress, shrink_result& out)
      : scenario_(s), limits_(limits), progress_(progress), out_(out) {}

  run_result run_one(std::uint64_t seed, const options& o) {
    ++out_.runs;
    run_result r = run(scenario_, seed, o);
    if (progress_) progress_(out_.runs, limits_.max_runs);
    return r;
  }
  bool budget_left() {
    if (out_.runs < limits_.max_runs) return true;
    out_.budget_exhausted = true;
    return false;
  }
  void set_signature(std::string s) { signature_ = std::move(s); }
  bool fails(const run_result& r) const {
    return !r.passed && (!limits_.same_failure || failure_signature(r) == signature_);
  }

  // The candidate options under the current seed and the next seed_tries - 1; the first failing
  // one becomes the current case.
  bool attempt(failing_case& cur, const options& candidate, const std::string& what) {
    // The seeds after cur.seed stop at the largest seed rather than wrap to 0.
    const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - cur.seed;
    const std::uint64_t tries = limits_.seed_tries - 1 > room ? room + 1 : limits_.seed_tries;
    for (std::uint64_t t = 0; t < tries; ++t) {
      if (!budget_left()) return false;
      const std::uint64_t seed = cur.seed + t;
      run_result r = run_one(seed, candidate);
      if (!fails(r)) continue;
      cur.seed = seed;
      cur.opts = tighten(scenario_, candidate, r);
      cur.result = std::move(r);
      out_.log.push_back(t == 0 ? what : cat(what, " (seed ", std::to_string(seed), ")"));
      return true;
    }
    return false;
  }

  // Lowers an integer knob: tries the floor, then halfway, ..., then one less; repeats from each
  // value kept. Returns whether it moved.
  template <class Get, class Set>
  bool lower(failing_case& cur, const std::string& name, std::int64_t floor, Get get, Set set) {
    bool moved_any = false;
    for (;;) {
      const std::int64_t v = get(cur);
      if (v <= floor) return moved_any;
      bool moved = false;
      for (std::int64_t d = v - floor; d >= 1; d /= 2) {
        options candidate = cur.opts;
        set(candidate, v - d);
        if (attempt(cur, candidate, cat(name, " ", std::to_string(v), " -> ", std::to_string(v - d)))) {
          moved = true;
          break;
        }
        if (out_.budget_exhausted) return moved_any;
      }
      if (!moved) return moved_any;
      moved_any = true;
    }
  }

  // A failing run's options with every knob it used made explicit and the preemption bound
  // lowered to what it used: the same run. A knob the scenario does not declare cannot be
  // passed back (run() rejects it); that run has already failed for reading it.
  static options tighten(const scenario& s, options o, const run_result& r) {
    for (const auto& [name, value] : r.params) {
      if (s.find_knob(name) != nullptr) o.params[name] = value;
    }
    o.max_preemptions = std::min(o.max_preemptions, r.preemptions);
    return o;
  }

 private:
  const scenario& scenario_;
  shrink_limits limits_;
  const std::function<void(std::uint64_t, std::uint64_t)>& progress_;
  shrink_result& out_;
  std::string signature_;
};

}  // namespace

shrink_result shrink(const scenario& s, std::uint64_t seed, const options& o, const shrink_limits& limits,
                     const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  validate(limits);
  validate(s, o);
  shrink_result out;
  searcher search(s, limits, progress, out);
  options plain = o;
  plain.record_trace = false;

  run_result first = search.run_one(seed, plain);
  out.original = {seed, plain, first};
  if (first.passed) {
    out.minimal = out.original;
    return out;
  }
  out.reproduced = true;
  search.set_signature(failure_signature(first));

  // The explicit form: the swarm's mix as plain rates, every knob as a param, the preemptions it
  // made as the bound. It must be the very same run (same trace hash).
  options explicit_form = resolve(plain, seed);
  explicit_form.swarm = false;
  explicit_form = searcher::tighten(s, explicit_form, first);
  if (search.budget_left()) {
    run_result again = search.run_one(seed, explicit_form);
    if (again.trace_hash == first.trace_hash && search.fails(again)) {
      out.made_explicit = true;
      out.original = {seed, explicit_form, std::move(again)};
    }
  }
  failing_case cur = out.original;
  const bool faults_explicit = !cur.opts.swarm;

  auto param_of = [](const std::string& name) {
    return [name](const failing_case& c) {
      const auto it = c.result.params.find(name);
      return it == c.result.params.end() ? std::int64_t{0} : it->second;
    };
  };

  for (bool moved = true; moved && !out.budget_exhausted;) {
    moved = false;
    // 1. Drop whole fault kinds.
    if (faults_explicit) {
      for (std::size_t k = 0; k < fault_kinds && !out.budget_exhausted; ++k) {
        if (cur.opts.faults.rate_ppm[k] == 0) continue;
        options candidate = cur.opts;
        candidate.faults.rate_ppm[k] = 0;
        moved |= search.attempt(cur, candidate,
                                cat("fault ", platform::fault_name(static_cast<platform::fault>(k)), " off"));
      }
    }
    // 2. Scenario knobs (tasks, threads, items, ...), each towards the floor.
    std::set<std::string> names;
    for (const auto& [name, value] : cur.result.params) names.insert(name);
    for (const auto& name : names) {
      if (out.budget_exhausted) break;
      const knob* k = s.find_knob(name);
      if (k == nullptr) continue;
      moved |= search.lower(cur, name, std::max(limits.param_floor, k->min), param_of(name),
                            [&name](options& c, std::int64_t v) { c.params[name] = v; });
    }
    // 3. Preemptions, towards none.
    if (!out.budget_exhausted) {
      moved |= search.lower(
          cur, "preemptions", 0,
          [](const failing_case& c) {
            return static_cast<std::int64_t>(std::min(c.opts.max_preemptions, c.result.preemptions));
          },
          [](options& c, std::int64_t v) { c.max_preemptions = static_cast<std::uint64_t>(v); });
    }
    // 4. PCT depth, towards 1.
    if (!out.budget_exhausted && cur.opts.strategy == strategy_kind::pct) {
      moved |= search.lower(
          cur, "depth", 1, [](const failing_case& c) { return static_cast<std::int64_t>(c.opts.pct_depth); },
          [](options& c, std::int64_t v) { c.pct_depth = static_cast<std::uint32_t>(v); });
    }
    // 5. Rates of the faults the failure needs.
    if (faults_explicit) {
      for (std::size_t k = 0; k < fault_kinds && !out.budget_exhausted; ++k) {
        if (cur.opts.faults.rate_ppm[k] == 0) continue;
        moved |= search.lower(
            cur, cat(platform::fault_name(static_cast<platform::fault>(k)), " ppm"), 1,
            [k](const failing_case& c) { return static_cast<std::int64_t>(c.opts.faults.rate_ppm[k]); },
            [k](options& c, std::int64_t v) { c.faults.rate_ppm[k] = static_cast<std::uint32_t>(v); });
      }
    }
  }
  out.minimal = std::move(cur);
  return out;
}

std::vector<std::string> compare(const failing_case& before, const failing_case& after) {
  std::vector<std::string> lines;
  auto row = [&lines](const std::string& name, const std::string& a, const std::string& b) {
    lines.push_back(a == b ? cat("  ", name, ": ", a, " (unchanged)") : cat("  ", name, ": ", a, " -> ", b));
  };
  auto count_row = [&lines](const std::string& name, std::uint64_t a, std::uint64_t b) {
    std::string line = cat("  ", name, ": ", std::to_string(a));
    if (a == b) {
      line += " (unchanged)";
    } else {
      line += cat(" -> ", std::to_string(b));
      if (a > 0) {
        const double change = 100.0 * (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(a);
        line += cat(" (", change < 0 ? "" : "+", std::to_string(static_cast<long long>(change)), "%)");
      }
    }
    lines.push_back(line);
  };
  row("seed", std::to_string(before.seed), std::to_string(after.seed));
  std::set<std::string> names;
  for (const auto& [name, value] : before.result.params) names.insert(name);
  for (const auto& [name, value] : after.result.params) names.insert(name);
  for (const auto& name : names) {
    auto value = [&name](const failing_case& c) {
      const auto it = c.result.params.find(name);
      return it == c.result.params.end() ? std::string("-") : std::to_string(it->second);
    };
    row(cat("param ", name), value(before), value(after));
  }
  row("faults", fault_list(before.opts), fault_list(after.opts));
  if (before.opts.strategy == strategy_kind::pct) {
    row("pct depth", std::to_string(before.opts.pct_depth), std::to_string(after.opts.pct_depth));
  }
  count_row("preemptions", before.result.preemptions, after.result.preemptions);
  count_row("trace length (steps)", before.result.steps, after.result.steps);
  count_row("threads", before.result.fibers, after.result.fibers);
  count_row("switches", before.result.switches, after.result.switches);
  count_row("faults injected", before.result.faults, after.result.faults);
  return lines;
}

}  // namespace weft::sim
