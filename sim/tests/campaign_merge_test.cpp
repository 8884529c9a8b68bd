// campaign_merge_test.cpp — `fuzz --json` and `merge`: the merged shards of a campaign hold
// exactly the failures of the unsharded campaign, each distinct failure with its lowest seed; and
// inputs that are not the shards of one finished campaign are refused with status 2.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <weft/buggify.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/scenario.hpp>

#include "../src/campaign_report.hpp"
#include "cli_support.hpp"

namespace {

using json = nlohmann::json;

struct captured {
  int status = -1;
  std::string out;
};

// The CLI in process, over this binary's scenarios (the test-only known-bad ones included).
captured cli(std::vector<std::string> args) {
  const weft::sim::testing::cli_output o = weft::sim::testing::cli(std::move(args));
  return {o.status, o.out};
}

std::vector<json> lines_of(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

std::vector<json> of_type(const std::vector<json>& lines, const std::string& type) {
  std::vector<json> out;
  for (const json& l : lines) {
    if (l["type"] == type) out.push_back(l);
  }
  return out;
}

// A campaign's coverage: a probe every run reaches and one only the failing runs reach.
WEFT_SIM_SCENARIO(merge_probe_sampler)(weft::sim::context& sim) {
  WEFT_SIM_PROBE("merge_test.every_run");
  if (sim.chance(1, 5)) {
    WEFT_SIM_PROBE("merge_test.failing_run");
    WEFT_SIM_PROBE("merge_test.failing_run");
    sim.fail("sampled failure");
  }
}

std::string save(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "weft-merge-" + name + ".jsonl";
  std::ofstream(path) << text;
  return path;
}

// A campaign of the test-only lost-wake scenario, which fails on some seeds and passes others.
std::vector<std::string> fuzz_args(const std::string& seeds, const std::string& shard) {
  std::vector<std::string> a{"fuzz", "--scenario", "wake_storm_lost_wake", "--seeds", seeds, "--start", "100",
                             "--max-failures", "0", "--json"};
  if (!shard.empty()) {
    a.push_back("--shard");
    a.push_back(shard);
  }
  return a;
}

TEST(campaign_merge, merged_shards_equal_the_unsharded_campaign_failure_for_failure) {
  const captured whole = cli(fuzz_args("240", ""));
  ASSERT_EQ(whole.status, 1) << whole.out;
  std::vector<json> whole_lines = of_type(lines_of(whole.out), "failure");
  ASSERT_GE(whole_lines.size(), 2u) << "the campaign should fail on some seeds: " << whole.out;
  const json summary = lines_of(whole.out).back();
  EXPECT_EQ(summary["type"], "summary");
  EXPECT_EQ(summary["ran"], 240);
  EXPECT_EQ(summary["complete"], true);
  ASSERT_EQ(summary["failures"], whole_lines.size());

  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    const captured shard = cli(fuzz_args("240", std::to_string(i) + "/3"));
    ASSERT_NE(shard.status, 2) << shard.out;
    files.push_back(save("shard" + std::to_string(i), shard.out));
  }
  std::vector<std::string> merge_args{"merge", "--json"};
  merge_args.insert(merge_args.end(), files.rbegin(), files.rend());  // order of the files does not matter
  const captured merged = cli(merge_args);
  ASSERT_EQ(merged.status, 1) << merged.out;
  const json m = json::parse(merged.out);
  EXPECT_EQ(m["ran"], 240);
  EXPECT_EQ(m["complete"], true);
  ASSERT_EQ(m["failures"].size(), whole_lines.size());
  std::map<std::string, std::uint64_t> lowest;  // computed from the unsharded campaign
  for (std::size_t i = 0; i < whole_lines.size(); ++i) {
    EXPECT_EQ(m["failures"][i]["seed"], whole_lines[i]["seed"]);
    EXPECT_EQ(m["failures"][i]["why"], whole_lines[i]["why"]);
    EXPECT_EQ(m["failures"][i]["replay"], whole_lines[i]["replay"]);
    lowest.emplace(weft::sim::failure_kind(whole_lines[i]["why"]), whole_lines[i]["seed"].get<std::uint64_t>());
  }
  ASSERT_EQ(m["distinct"].size(), lowest.size());
  for (const json& d : m["distinct"]) EXPECT_EQ(d["lowest_seed"], lowest.at(d["kind"])) << d.dump();

  const captured text = cli({"merge", files[0], files[1], files[2]});
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("240 seeds ran, " + std::to_string(whole_lines.size()) + " failures"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("distinct: "), std::string::npos) << text.out;
  for (const std::string& f : files) std::filesystem::remove(f);
}

TEST(campaign_merge, merged_shards_sum_the_probes_of_the_unsharded_campaign) {
  auto args = [](const std::string& shard) {
    std::vector<std::string> a{"fuzz", "--scenario", "merge_probe_sampler", "--seeds", "90", "--max-failures", "0",
                               "--json"};
    if (!shard.empty()) a.insert(a.end(), {"--shard", shard});
    return a;
  };
  const captured whole = cli(args(""));
  ASSERT_EQ(whole.status, 1) << whole.out;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> expected;  // name -> (runs, hits)
  for (const json& p : of_type(lines_of(whole.out), "probe")) expected[p["name"]] = {p["runs"], p["hits"]};
  const std::size_t failures = of_type(lines_of(whole.out), "failure").size();
  ASSERT_GT(failures, 0u);
  EXPECT_EQ(expected.at("merge_test.every_run"), std::make_pair(std::uint64_t{90}, std::uint64_t{90}));
  EXPECT_EQ(expected.at("merge_test.failing_run"), std::make_pair(std::uint64_t{failures}, std::uint64_t{2 * failures}));

  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) files.push_back(save("probes" + std::to_string(i), cli(args(std::to_string(i) + "/3")).out));
  const captured merged = cli({"merge", "--json", files[0], files[1], files[2]});
  ASSERT_EQ(merged.status, 1) << merged.out;
  const json m = json::parse(merged.out);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> summed;
  for (const json& p : m["probes"]) summed[p["name"]] = {p["runs"], p["hits"]};
  EXPECT_EQ(summed, expected);

  const captured text = cli({"merge", files[0], files[1], files[2]});
  EXPECT_NE(text.out.find("merge_test.every_run (90 runs, 90 hits)"), std::string::npos) << text.out;
  for (const std::string& f : files) std::filesystem::remove(f);
}

TEST(campaign_merge, inputs_that_are_not_one_finished_campaign_are_refused) {
  const captured a = cli(fuzz_args("30", "0/2"));
  const captured b = cli(fuzz_args("30", "1/2"));
  const captured other = cli(fuzz_args("31", "1/2"));
  const std::string fa = save("a", a.out), fb = save("b", b.out), fo = save("other", other.out);
  std::string truncated_text = b.out.substr(0, b.out.rfind('\n', b.out.size() - 2) + 1);  // summary dropped
  const std::string truncated = save("truncated", truncated_text);
  const std::string malformed = save("malformed", "{\"type\":\"failure\",\"seed\":\n");
  const std::string wrong_type = save("wrong_type", "{\"type\":\"summary\",\"format\":1,\"scenario\":7}\n");
  const std::string future = save("future", "{\"type\":\"summary\",\"format\":2}\n");
  const std::string negative =
      save("negative", a.out.substr(0, a.out.find("\"shard\":")) + "\"shard\":-1,\"shards\":2,\"ran\":15,\"failures\":0,\"complete\":true}\n");
  const std::vector<std::vector<std::string>> bad{
      {"merge", fa},                   // shard 1/2 missing
      {"merge", fa, fa, fb},           // shard 0 twice
      {"merge", fa, fo},               // shards of two campaigns
      {"merge", fa, truncated},        // no summary line
      {"merge", fa, malformed},        // not JSON
      {"merge", fa, wrong_type},       // a field of the wrong type
      {"merge", fa, future},           // a format this build does not read
      {"merge", fa, negative},         // a negative shard index
      {"merge", fa, "/nonexistent/weft-shard.jsonl"},
  };
  for (const auto& args : bad) {
    const captured r = cli(args);
    EXPECT_EQ(r.status, 2) << args.back() << ": " << r.out;
    EXPECT_TRUE(r.out.empty()) << "a refused merge prints no report: " << r.out;
  }
  for (const std::string& f : {fa, fb, fo, truncated, malformed, wrong_type, future, negative}) std::filesystem::remove(f);
}

TEST(campaign_merge, json_and_shrink_do_not_combine) {
  EXPECT_EQ(cli({"fuzz", "--scenario", "wake_storm", "--seeds", "3", "--json", "--shrink"}).status, 2);
}

}  // namespace
