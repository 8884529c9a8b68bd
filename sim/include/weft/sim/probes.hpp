// weft/sim/probes.hpp — what the coverage probes of a program (WEFT_SIM_PROBE) saw over many runs.
//
// Every probe linked into the program registers before main, so a campaign can name the probes
// that no run reached. A probe_tally adds up runs; weft-sim fuzz and weft::sim::check print its
// line when the program has probes.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <weft/sim/run.hpp>

namespace weft::sim {

// The names of every probe site linked into this program, sorted, each name once (several sites
// may share a name; they count as one probe).
std::vector<std::string> registered_probes();

struct probe_coverage {
  std::string name;
  std::uint64_t runs = 0;  // runs that reached it at least once
  std::uint64_t hits = 0;  // passes over it, all runs together
};

// "probes: 2 of 3 reached: a (41 runs, 977 hits), b (3 runs, 3 hits); never reached: c" for the
// list given (by name), or empty when it is empty.
std::string describe_probes(const std::vector<probe_coverage>& probes);

class probe_tally {
 public:
  void add(const run_result& r);
  void add(const probe_tally& other);
  // Every registered probe (and any probe a run reported), by name, reached or not.
  std::vector<probe_coverage> coverage() const;
  // The names of the registered probes no run reached, sorted.
  std::vector<std::string> never_hit() const;
  // describe_probes(coverage()): empty when the program has no probes.
  std::string describe() const;

 private:
  std::map<std::string, probe_coverage> reached_;
};

}  // namespace weft::sim
