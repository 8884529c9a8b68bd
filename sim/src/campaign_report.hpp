// campaign_report.hpp — fuzz campaigns as JSON lines, and the merge of sharded ones.
//
// `weft-sim fuzz --json` prints one line per failing seed and then one summary line:
//   {"type":"failure","scenario":"s","seed":17,"why":"deadlock: ...","replay":"weft-sim replay ..."}
//   {"type":"summary","format":1,"scenario":"s","options":"--strategy random ...","start":0,
//    "seeds":1000,"shard":2,"shards":8,"ran":125,"failures":1,"complete":true}
// and, before the summary, one line per coverage probe of the program (WEFT_SIM_PROBE):
//   {"type":"probe","scenario":"s","name":"wal.torn_tail","runs":3,"hits":5}
// `seeds` is the whole campaign's count (every shard prints the same), `ran` this shard's runs;
// `complete` is false when --max-failures stopped the shard early.
//
// `weft-sim merge FILE...` reads such outputs, checks they are shards of one campaign (same
// scenario, options, start, seeds and shard count; each shard once), and reports every failure
// in seed order and each distinct failure (failure_kind) with its count and lowest failing seed,
// and the probes' runs and hits summed over the shards (the probes no shard reached listed).
// Because a shard's seeds are fixed by (start, seeds, i/n), the merged shards of a campaign
// that no shard stopped early hold exactly the failures the unsharded campaign finds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <weft/sim/probes.hpp>

namespace weft::sim {

inline constexpr int campaign_format = 1;

struct campaign_failure {
  std::uint64_t seed = 0;
  std::string why;     // the first line of the failure
  std::string replay;  // the command that replays it
};

struct campaign_summary {
  std::string scenario;
  std::string options;  // replay_arguments() of the campaign's options
  std::uint64_t start = 0;
  std::uint64_t seeds = 0;
  std::uint64_t shard = 0;
  std::uint64_t shards = 1;
  std::uint64_t ran = 0;
  std::uint64_t failures = 0;
  bool complete = true;
};

std::string failure_line(const std::string& scenario, const campaign_failure& f);
std::string probe_line(const std::string& scenario, const probe_coverage& p);
std::string summary_line(const campaign_summary& s);

// What makes two failures the same kind: the first line up to its first ':' (the whole line if
// it has none), without digits, so ids and counts do not split a kind.
std::string failure_kind(const std::string& why);

// The merge subcommand: reads `files`, prints the merged report (text, or JSON with `json`).
// Returns 0 (no failure), 1 (failures) or 2 (unreadable, malformed or mismatched inputs, or a
// shard missing or given twice; one line on stderr says which).
int merge_campaigns(const std::vector<std::string>& files, bool json);

}  // namespace weft::sim
