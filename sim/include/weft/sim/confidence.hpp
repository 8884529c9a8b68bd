// weft/sim/confidence.hpp — what a PCT campaign that found nothing is worth.
//
// PCT (Burckhardt et al., ASPLOS 2010) runs a program of at most n threads and k steps with
// random thread priorities and d - 1 priority change points drawn uniformly from steps [1, k].
// A bug of depth d (d ordering constraints between steps) is then hit by one run with probability
// at least 1 / (n · k^(d-1)), and N independent seeds all miss it with probability at most
// (1 - p)^N. weft-sim draws change points from [1, --pct-steps], so k here is that range: the
// bound covers bugs whose ordering points lie within the first k steps, and steps past k are
// never a change point (a run longer than k is reported as such).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <string>

namespace weft::sim {

struct pct_bound {
  std::uint32_t depth = 1;        // d
  std::uint64_t threads = 1;      // n: the most threads any run created
  std::uint64_t change_range = 1; // k: change points are drawn from steps [1, k]
  std::uint64_t longest_run = 0;  // the most steps any run took (for the coverage note)
  double log10_per_run = 0;       // log10 of the per-run bound (kept as a logarithm: it underflows)

  // The per-run detection probability bound p (0 when it underflows a double).
  double per_run() const;
  // The bound on the chance that `seeds` runs all miss a depth-d bug: (1 - p)^seeds.
  double miss(std::uint64_t seeds) const;
  // One line: "pct-bound: d=3 n=4 k=1000: a run finds a depth-3 bug with p >= 2.5e-07; 10000
  // seeds miss it with probability <= 0.997503", plus a note when k < d - 1 (the bound is then
  // vacuous: no depth-d bug fits in k steps) and one when a run outlasted k.
  std::string describe(std::uint64_t seeds) const;
};

// n and the longest run are measured from the runs; zero threads count as one.
pct_bound pct_detection_bound(std::uint32_t depth, std::uint64_t threads, std::uint64_t change_range,
                              std::uint64_t longest_run);

}  // namespace weft::sim
