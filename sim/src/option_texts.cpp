// option_texts.cpp — parsing the options from their flag texts (option_texts.hpp).
#include "option_texts.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <weft/sim/scenario.hpp>

namespace weft::sim {

namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

std::string fault_kind_list() {
  std::string s;
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    if (!s.empty()) s += ", ";
    s += platform::fault_name(static_cast<platform::fault>(k));
  }
  return s;
}

// KIND[=P] -> the kind's index and its rate in ppm.
std::pair<std::size_t, std::uint32_t> parse_fault(const std::string& spec) {
  const auto eq = spec.find('=');
  const std::string name = spec.substr(0, eq);
  std::optional<std::size_t> kind;
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    if (name == platform::fault_name(static_cast<platform::fault>(k))) kind = k;
  }
  if (!kind) throw invalid_options("--fault", cat("unknown fault kind '", name, "'; accepted: ", fault_kind_list()));
  if (eq == std::string::npos) return {*kind, ppm_one};
  const std::string text = spec.substr(eq + 1);
  double p = 0.0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, p);
  const std::string too_small = cat(spec, ": a probability above 0 must be at least 0.0000005 (rates are whole ppm)");
  // A positive number too small for a double (1e-400) is out of range too; it is a rate below the
  // smallest, not a malformed number. strtod tells underflow (near 0) from overflow (huge).
  if (ec == std::errc::result_out_of_range && ptr == end && text.front() != '-' &&
      std::fabs(std::strtod(text.c_str(), nullptr)) < 1.0) {
    throw invalid_options("--fault", too_small);
  }
  // from_chars reads "nan" and "inf"; neither is a probability.
  if (text.empty() || ec != std::errc{} || ptr != end || !std::isfinite(p) || p < 0.0 || p > 1.0) {
    throw invalid_options("--fault", cat(spec, ": the probability must be a finite number in [0, 1]"));
  }
  const auto ppm = static_cast<std::uint32_t>(std::lround(p * ppm_one));
  if (p > 0.0 && ppm == 0) throw invalid_options("--fault", too_small);
  return {*kind, ppm};
}

}  // namespace

options parse_options(const option_texts& t, const scenario* s) {
  options o;
  if (t.strategy == "pct") {
    o.strategy = strategy_kind::pct;
  } else if (t.strategy != "random") {
    throw invalid_options("--strategy", cat("'", t.strategy, "' is not a strategy; accepted: random, pct"));
  }
  if (o.strategy != strategy_kind::pct) {
    if (t.depth) throw invalid_options("--depth", "applies only with --strategy pct");
    if (t.pct_steps) throw invalid_options("--pct-steps", "applies only with --strategy pct");
  }
  if (t.depth) o.pct_depth = parse_integer("--depth", *t.depth, min_pct_depth, max_pct_depth);
  if (t.pct_steps) o.pct_steps = parse_integer("--pct-steps", *t.pct_steps, min_pct_steps, u64_max);
  if (t.step_budget) o.step_budget = parse_integer("--step-budget", *t.step_budget, min_step_budget, u64_max);
  if (t.cores) o.cores = parse_integer("--cores", *t.cores, min_cores, max_cores);
  if (t.preemptions) o.max_preemptions = parse_integer("--preemptions", *t.preemptions, std::uint64_t{0}, u64_max);
  o.swarm = t.swarm;
  std::array<bool, fault_kinds> seen{};
  for (const auto& spec : t.faults) {
    const auto [kind, ppm] = parse_fault(spec);
    if (seen[kind]) throw invalid_options("--fault", cat(spec, ": that fault kind is given twice"));
    seen[kind] = true;
    // The swarm switches on, per seed, kinds whose rate is 0: a 0 given beside it would not
    // keep the kind out, so it is refused rather than silently overridden.
    if (o.swarm && ppm == 0) {
      throw invalid_options("--fault", cat(spec, ": a rate of 0 does not keep a kind out of --swarm's mixes"));
    }
    o.faults.rate_ppm[kind] = ppm;
  }
  for (const auto& spec : t.params) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw invalid_options("--param", cat("expected NAME=INTEGER: '", spec, "'"));
    const std::string name = spec.substr(0, eq);
    if (o.params.count(name) != 0) throw invalid_options("--param", cat(spec, ": knob ", name, " is given twice"));
    try {
      o.params[name] = parse_integer("--param", spec.substr(eq + 1), std::numeric_limits<std::int64_t>::min(),
                                     std::numeric_limits<std::int64_t>::max());
    } catch (const invalid_options&) {
      const knob* k = s == nullptr ? nullptr : s->find_knob(name);
      const std::string range =
          k == nullptr ? "" : cat("; accepted: [", std::to_string(k->min), ", ", std::to_string(k->max), "]");
      throw invalid_options("--param", cat(spec, ": the value is not a decimal 64-bit integer", range));
    }
  }
  validate(o);
  return o;
}

}  // namespace weft::sim
