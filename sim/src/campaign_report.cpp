// campaign_report.cpp — fuzz campaigns as JSON lines, and their merge (campaign_report.hpp).
#include "campaign_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace weft::sim {

namespace {

using json = nlohmann::ordered_json;  // keys in the order written: "type" first

// A bad input file: the message names the file and line.
struct merge_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string where(const std::string& file, std::size_t line) { return file + ":" + std::to_string(line) + ": "; }

std::uint64_t u64_field(const json& j, const char* key, const std::string& at) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) throw merge_error(at + "'" + key + "' is missing or not a whole number");
  return it->get<std::uint64_t>();
}

std::string text_field(const json& j, const char* key, const std::string& at) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) throw merge_error(at + "'" + key + "' is missing or not a string");
  return it->get<std::string>();
}

bool bool_field(const json& j, const char* key, const std::string& at) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) throw merge_error(at + "'" + key + "' is missing or not true/false");
  return it->get<bool>();
}

struct shard_output {
  std::string file;
  campaign_summary summary;
  std::vector<campaign_failure> failures;
  std::vector<probe_coverage> probes;
};

// One file: failure lines, then exactly one summary line (blank lines are ignored).
shard_output read_shard(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw merge_error(file + ": cannot be read");
  shard_output out;
  out.file = file;
  std::optional<campaign_summary> summary;
  std::string text;
  std::size_t line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.empty()) continue;
    const std::string at = where(file, line_no);
    if (summary) throw merge_error(at + "a line after the summary line");
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw merge_error(at + "not a JSON object (is this `fuzz --json` output?)");
    const std::string type = text_field(j, "type", at);
    if (type == "failure") {
      out.failures.push_back({u64_field(j, "seed", at), text_field(j, "why", at), text_field(j, "replay", at)});
    } else if (type == "probe") {
      if (text_field(j, "scenario", at).empty()) throw merge_error(at + "'scenario' is empty");
      out.probes.push_back({text_field(j, "name", at), u64_field(j, "runs", at), u64_field(j, "hits", at)});
    } else if (type == "summary") {
      if (u64_field(j, "format", at) != static_cast<std::uint64_t>(campaign_format)) {
        throw merge_error(at + "format " + j["format"].dump() + " is not " + std::to_string(campaign_format));
      }
      campaign_summary s;
      s.scenario = text_field(j, "scenario", at);
      s.options = text_field(j, "options", at);
      s.start = u64_field(j, "start", at);
      s.seeds = u64_field(j, "seeds", at);
      s.shard = u64_field(j, "shard", at);
      s.shards = u64_field(j, "shards", at);
      s.ran = u64_field(j, "ran", at);
      s.failures = u64_field(j, "failures", at);
      s.complete = bool_field(j, "complete", at);
      if (s.shards == 0 || s.shard >= s.shards) throw merge_error(at + "shard " + std::to_string(s.shard) + "/" +
                                                                  std::to_string(s.shards) + " is not i/n with i < n");
      if (s.failures != out.failures.size()) {
        throw merge_error(at + "the summary counts " + std::to_string(s.failures) + " failures, the file has " +
                          std::to_string(out.failures.size()) + " (a truncated output?)");
      }
      summary = s;
    } else {
      throw merge_error(at + "unknown line type '" + type + "'");
    }
  }
  if (!summary) throw merge_error(file + ": no summary line (the shard did not finish?)");
  out.summary = *summary;
  return out;
}

// Every shard belongs to the same campaign, each appears once, none is missing.
void check_one_campaign(const std::vector<shard_output>& shards) {
  const campaign_summary& first = shards.front().summary;
  std::map<std::uint64_t, const std::string*> by_index;
  for (const shard_output& s : shards) {
    const campaign_summary& c = s.summary;
    if (c.scenario != first.scenario || c.options != first.options || c.start != first.start ||
        c.seeds != first.seeds || c.shards != first.shards) {
      throw merge_error(s.file + ": not a shard of the campaign of " + shards.front().file +
                        " (scenario, options, start, seeds and shard count must all match)");
    }
    const auto [it, fresh] = by_index.emplace(c.shard, &s.file);
    if (!fresh) throw merge_error(s.file + ": shard " + std::to_string(c.shard) + " is also " + *it->second);
  }
  if (by_index.size() != first.shards) {
    std::string missing;
    std::uint64_t listed = 0;
    for (std::uint64_t i = 0; i < first.shards && listed < 8; ++i) {
      if (by_index.count(i) != 0) continue;
      missing += (missing.empty() ? "" : ",") + std::to_string(i);
      ++listed;
    }
    throw merge_error("shards missing: " + std::to_string(first.shards - by_index.size()) + " of " +
                      std::to_string(first.shards) + " (first missing: " + missing + ")");
  }
}

struct distinct_failure {
  std::string kind;
  std::uint64_t count = 0;
  campaign_failure lowest;
};

}  // namespace

std::string failure_kind(const std::string& why) {
  std::string line = why.substr(0, why.find('\n'));
  line = line.substr(0, line.find(':'));
  std::string out;
  for (const char c : line) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) out.push_back(c);
  }
  return out;
}

std::string failure_line(const std::string& scenario, const campaign_failure& f) {
  return json{{"type", "failure"}, {"scenario", scenario}, {"seed", f.seed}, {"why", f.why}, {"replay", f.replay}}
      .dump();
}

std::string probe_line(const std::string& scenario, const probe_coverage& p) {
  return json{{"type", "probe"}, {"scenario", scenario}, {"name", p.name}, {"runs", p.runs}, {"hits", p.hits}}.dump();
}

std::string summary_line(const campaign_summary& s) {
  return json{{"type", "summary"}, {"format", campaign_format}, {"scenario", s.scenario}, {"options", s.options},
              {"start", s.start},  {"seeds", s.seeds},          {"shard", s.shard},       {"shards", s.shards},
              {"ran", s.ran},      {"failures", s.failures},    {"complete", s.complete}}
      .dump();
}

int merge_campaigns(const std::vector<std::string>& files, bool as_json) {
  std::vector<shard_output> shards;
  try {
    if (files.empty()) throw merge_error("no shard output given");
    for (const std::string& f : files) shards.push_back(read_shard(f));
    check_one_campaign(shards);
  } catch (const merge_error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-sim merge: %s\n", e.what());
    return 2;
  }
  std::vector<campaign_failure> all;
  std::uint64_t ran = 0;
  std::vector<std::uint64_t> stopped_early;
  for (const shard_output& s : shards) {
    all.insert(all.end(), s.failures.begin(), s.failures.end());
    ran += s.summary.ran;
    if (!s.summary.complete) stopped_early.push_back(s.summary.shard);
  }
  std::sort(all.begin(), all.end(), [](const campaign_failure& a, const campaign_failure& b) { return a.seed < b.seed; });
  std::sort(stopped_early.begin(), stopped_early.end());
  std::map<std::string, probe_coverage> probes;  // by name, summed over the shards
  for (const shard_output& s : shards) {
    for (const probe_coverage& p : s.probes) {
      probe_coverage& sum = probes[p.name];
      sum.name = p.name;
      sum.runs += p.runs;
      sum.hits += p.hits;
    }
  }
  std::vector<probe_coverage> probe_list;
  for (const auto& [name, p] : probes) probe_list.push_back(p);
  std::map<std::string, distinct_failure> distinct;  // by kind; each keeps its lowest seed
  for (const campaign_failure& f : all) {
    distinct_failure& d = distinct[failure_kind(f.why)];
    if (d.count++ == 0) {
      d.kind = failure_kind(f.why);
      d.lowest = f;
    }
  }
  const campaign_summary& c = shards.front().summary;
  if (as_json) {
    json kinds = json::array();
    for (const auto& [kind, d] : distinct) {
      kinds.push_back({{"kind", kind}, {"count", d.count}, {"lowest_seed", d.lowest.seed}, {"why", d.lowest.why},
                       {"replay", d.lowest.replay}});
    }
    json failures = json::array();
    for (const campaign_failure& f : all) failures.push_back({{"seed", f.seed}, {"why", f.why}, {"replay", f.replay}});
    json probe_array = json::array();
    for (const probe_coverage& p : probe_list) probe_array.push_back({{"name", p.name}, {"runs", p.runs}, {"hits", p.hits}});
    std::printf("%s\n", json{{"type", "merged"}, {"format", campaign_format}, {"scenario", c.scenario},
                             {"options", c.options}, {"start", c.start}, {"seeds", c.seeds}, {"shards", c.shards},
                             {"ran", ran}, {"complete", stopped_early.empty()}, {"stopped_early", stopped_early},
                             {"distinct", kinds}, {"failures", failures}, {"probes", probe_array}}
                            .dump()
                            .c_str());
  } else {
    std::printf("merge: scenario=%s %s seeds=%llu from %llu, %llu shards, %llu seeds ran, %zu failures, %zu distinct\n",
                c.scenario.c_str(), c.options.c_str(), static_cast<unsigned long long>(c.seeds),
                static_cast<unsigned long long>(c.start), static_cast<unsigned long long>(c.shards),
                static_cast<unsigned long long>(ran), all.size(), distinct.size());
    for (const std::uint64_t s : stopped_early) {
      std::printf("merge: shard %llu stopped early (--max-failures): failures past it may be missing\n",
                  static_cast<unsigned long long>(s));
    }
    for (const auto& [kind, d] : distinct) {
      std::printf("distinct: %s (%llu seeds), lowest seed %llu: %s\n  replay: %s\n", kind.c_str(),
                  static_cast<unsigned long long>(d.count), static_cast<unsigned long long>(d.lowest.seed),
                  d.lowest.why.c_str(), d.lowest.replay.c_str());
    }
    if (const std::string line = describe_probes(probe_list); !line.empty()) std::printf("%s\n", line.c_str());
  }
  return all.empty() ? 0 : 1;
}

}  // namespace weft::sim
