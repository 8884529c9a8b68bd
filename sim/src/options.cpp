// options.cpp — printing options and resolving swarm fault mixes.
#include <cstdio>
#include <string>

#include <weft/platform/random.hpp>
#include <weft/sim/options.hpp>

namespace weft::sim {

const char* to_string(strategy_kind k) noexcept {
  switch (k) {
    case strategy_kind::random: return "random";
    case strategy_kind::pct: return "pct";
  }
  return "?";
}

bool fault_plan::any() const noexcept {
  for (const auto r : rate_ppm) {
    if (r != 0) return true;
  }
  return false;
}

void validate(const options& o) {
  if (o.strategy != strategy_kind::random && o.strategy != strategy_kind::pct) {
    throw invalid_options("--strategy", "unknown strategy; accepted: random, pct");
  }
  check_range("--depth", o.pct_depth, min_pct_depth, max_pct_depth);
  check_range("--pct-steps", o.pct_steps, min_pct_steps);
  check_range("--step-budget", o.step_budget, min_step_budget);
  check_range("--cores", o.cores, min_cores, max_cores);
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    if (o.faults.rate_ppm[k] <= ppm_one) continue;
    throw invalid_options("--fault", std::string(platform::fault_name(static_cast<platform::fault>(k))) + " at " +
                                         std::to_string(o.faults.rate_ppm[k]) +
                                         " ppm is not a probability; accepted: [0, 1]");
  }
}

options resolve(const options& o, std::uint64_t seed) {
  options r = o;
  if (!o.swarm) return r;
  // A stream of its own, so the mix does not depend on how the other streams are consumed.
  std::uint64_t split = seed ^ 0x5a5a5a5a5a5a5a5aULL;
  platform::random swarm(platform::random::splitmix64(split));
  static constexpr std::uint32_t rates_ppm[] = {1'000, 10'000, 50'000, 200'000};
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    const bool on = swarm.chance(1, 2);
    const std::uint32_t chosen = rates_ppm[swarm.below(4)];
    // A lying fsync breaks every correct service that trusts the device: only asked for by name.
    if (static_cast<platform::fault>(k) == platform::fault::fsync_lies) continue;
    if (r.faults.rate_ppm[k] == 0 && on) r.faults.rate_ppm[k] = chosen;
  }
  return r;
}

namespace {
std::string probability(std::uint32_t ppm) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u.%06u", ppm / ppm_one, ppm % ppm_one);
  return buf;
}
}  // namespace

std::string describe(const options& o) {
  std::string s = "strategy=";
  s += to_string(o.strategy);
  if (o.strategy == strategy_kind::pct) {
    s += " depth=" + std::to_string(o.pct_depth) + " pct-steps=" + std::to_string(o.pct_steps);
  }
  s += " step-budget=" + std::to_string(o.step_budget) + " cores=" + std::to_string(o.cores);
  if (o.max_preemptions != options::unbounded) {
    s += " preemptions<=";
    s += std::to_string(o.max_preemptions);
  }
  s += " faults=";
  if (!o.faults.any()) {
    s += "none";
  } else {
    bool first = true;
    for (std::size_t k = 0; k < fault_kinds; ++k) {
      if (o.faults.rate_ppm[k] == 0) continue;
      if (!first) s += ",";
      first = false;
      s += platform::fault_name(static_cast<platform::fault>(k));
      s += '=';
      s += probability(o.faults.rate_ppm[k]);
    }
  }
  if (o.swarm) s += " swarm=on";
  s += " params=";
  if (o.params.empty()) {
    s += "none";
  } else {
    bool first = true;
    for (const auto& [k, v] : o.params) {
      if (!first) s += ",";
      first = false;
      s += k + "=" + std::to_string(v);
    }
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> replay_flags(const options& o) {
  std::vector<std::pair<std::string, std::string>> flags;
  flags.emplace_back("--strategy", to_string(o.strategy));
  if (o.strategy == strategy_kind::pct) {
    flags.emplace_back("--depth", std::to_string(o.pct_depth));
    flags.emplace_back("--pct-steps", std::to_string(o.pct_steps));
  }
  flags.emplace_back("--step-budget", std::to_string(o.step_budget));
  flags.emplace_back("--cores", std::to_string(o.cores));
  if (o.max_preemptions != options::unbounded) flags.emplace_back("--preemptions", std::to_string(o.max_preemptions));
  for (std::size_t k = 0; k < fault_kinds; ++k) {
    if (o.faults.rate_ppm[k] == 0) continue;
    flags.emplace_back("--fault", std::string(platform::fault_name(static_cast<platform::fault>(k))) + "=" +
                                      probability(o.faults.rate_ppm[k]));
  }
  if (o.swarm) flags.emplace_back("--swarm", "");
  for (const auto& [k, v] : o.params) flags.emplace_back("--param", k + "=" + std::to_string(v));
  return flags;
}

std::string replay_arguments(const options& o) {
  std::string s;
  for (const auto& [flag, value] : replay_flags(o)) {
    if (!s.empty()) s += ' ';
    s += flag;
    if (!value.empty()) s += ' ' + value;
  }
  return s;
}

}  // namespace weft::sim
