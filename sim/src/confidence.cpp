// confidence.cpp — the PCT detection bound (weft/sim/confidence.hpp).
#include <weft/sim/confidence.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weft::sim {

pct_bound pct_detection_bound(std::uint32_t depth, std::uint64_t threads, std::uint64_t change_range,
                              std::uint64_t longest_run) {
  pct_bound b;
  b.depth = std::max<std::uint32_t>(depth, 1);
  b.threads = std::max<std::uint64_t>(threads, 1);
  b.change_range = std::max<std::uint64_t>(change_range, 1);
  b.longest_run = longest_run;
  b.log10_per_run = -(std::log10(static_cast<double>(b.threads)) +
                      static_cast<double>(b.depth - 1) * std::log10(static_cast<double>(b.change_range)));
  return b;
}

double pct_bound::per_run() const { return std::pow(10.0, log10_per_run); }

double pct_bound::miss(std::uint64_t seeds) const {
  const double p = per_run();
  if (p >= 1.0) return seeds == 0 ? 1.0 : 0.0;
  // exp(N · ln(1 - p)), with log1p so that a tiny p is not lost to rounding.
  return std::exp(static_cast<double>(seeds) * std::log1p(-p));
}

std::string pct_bound::describe(std::uint64_t seeds) const {
  char p_text[64];
  if (log10_per_run > -300) {
    std::snprintf(p_text, sizeof p_text, "%.3g", per_run());
  } else {
    std::snprintf(p_text, sizeof p_text, "10^%.1f", log10_per_run);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "pct-bound: d=%u n=%llu k=%llu: a run finds a depth-%u bug with p >= %s; %llu seed%s miss%s it with "
                "probability <= %.6g",
                depth, static_cast<unsigned long long>(threads), static_cast<unsigned long long>(change_range), depth,
                p_text, static_cast<unsigned long long>(seeds), seeds == 1 ? "" : "s", seeds == 1 ? "es" : "",
                miss(seeds));
  std::string out = line;
  if (depth - 1 > change_range) {
    // The bound is for bugs whose d - 1 ordering points are distinct steps within [1, k]: there is
    // no such bug when k is smaller, so the line above would promise nothing.
    std::snprintf(line, sizeof line,
                  " (vacuous: a depth-%u bug orders %u distinct steps, more than k=%llu; --pct-steps %u or more "
                  "gives a bound)",
                  depth, depth - 1, static_cast<unsigned long long>(change_range), depth - 1);
    out += line;
  }
  if (longest_run > change_range) {
    std::snprintf(line, sizeof line, " (a run took %llu steps: steps past k are never a change point; --pct-steps %llu covers them)",
                  static_cast<unsigned long long>(longest_run), static_cast<unsigned long long>(longest_run));
    out += line;
  }
  return out;
}

}  // namespace weft::sim
