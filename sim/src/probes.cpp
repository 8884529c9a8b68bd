// probes.cpp — the program's probe sites, and their coverage over many runs.
#include <algorithm>
#include <string>
#include <vector>

#include <weft/platform/buggify.hpp>
#include <weft/sim/hooks.hpp>
#include <weft/sim/probes.hpp>

namespace weft::sim {
namespace {

// Filled during static initialisation only (one thread), read afterwards.
std::vector<const platform::probe_site*>& sites() {
  static std::vector<const platform::probe_site*> all;
  return all;
}

}  // namespace

namespace detail {
void register_probe(const platform::probe_site& site) { sites().push_back(&site); }
}  // namespace detail

std::vector<std::string> registered_probes() {
  std::vector<std::string> names;
  names.reserve(sites().size());
  for (const auto* site : sites()) names.emplace_back(site->name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void probe_tally::add(const run_result& r) {
  for (const auto& [name, hits] : r.probe_hits) {
    probe_coverage& c = reached_[name];
    c.name = name;
    c.runs += 1;
    c.hits += hits;
  }
}

void probe_tally::add(const probe_tally& other) {
  for (const auto& [name, theirs] : other.reached_) {
    probe_coverage& c = reached_[name];
    c.name = name;
    c.runs += theirs.runs;
    c.hits += theirs.hits;
  }
}

std::vector<probe_coverage> probe_tally::coverage() const {
  std::map<std::string, probe_coverage> all = reached_;
  for (const auto& name : registered_probes()) all.try_emplace(name, probe_coverage{name, 0, 0});
  std::vector<probe_coverage> out;
  out.reserve(all.size());
  for (auto& [name, c] : all) out.push_back(std::move(c));
  return out;
}

std::vector<std::string> probe_tally::never_hit() const {
  std::vector<std::string> out;
  for (const auto& c : coverage()) {
    if (c.runs == 0) out.push_back(c.name);
  }
  return out;
}

std::string describe_probes(const std::vector<probe_coverage>& probes) {
  if (probes.empty()) return {};
  std::string reached;
  std::string missed;
  std::size_t reached_count = 0;
  for (const auto& c : probes) {
    if (c.runs == 0) {
      missed += (missed.empty() ? "; never reached: " : ", ") + c.name;
      continue;
    }
    reached += reached_count++ == 0 ? ": " : ", ";
    reached += c.name + " (" + std::to_string(c.runs) + (c.runs == 1 ? " run, " : " runs, ") + std::to_string(c.hits) +
               (c.hits == 1 ? " hit)" : " hits)");
  }
  return "probes: " + std::to_string(reached_count) + " of " + std::to_string(probes.size()) + " reached" + reached +
         missed;
}

std::string probe_tally::describe() const { return describe_probes(coverage()); }

}  // namespace weft::sim
