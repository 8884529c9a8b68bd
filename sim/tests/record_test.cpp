// Replay records: `--save FILE` on run, fuzz and shrink and `replay FILE` reproduce the same run
// (trace hash and verdict); a record from another build is refused naming both builds unless
// --force; and no record text, however malformed or hostile, does more than replay or end in
// one line and exit status 2 (a seeded parser fuzz, in process).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "../src/record.hpp"
#include "cli_support.hpp"

namespace {

using namespace weft::sim::testing;  // binary, shell, shell_raw, cli and the exit statuses

// The text after `key` on the last line that starts with it, or "".
std::string value_of(const std::string& text, const std::string& key) {
  const auto at = text.rfind("\n" + key);
  if (at == std::string::npos) return "";
  const auto begin = at + 1 + key.size();
  return text.substr(begin, text.find('\n', begin) - begin);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class record_files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("weft-records-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  // Replays `file` and checks it ran the recorded case: the same trace hash and outcome, and
  // the exit status of that outcome.
  void expect_replays(const std::string& file, const std::string& hash, const std::string& outcome) {
    const output again = shell(binary() + " replay " + file);
    EXPECT_EQ(again.status, outcome == "pass" ? exit_pass : exit_failed) << again.text;
    EXPECT_EQ(value_of(again.text, "trace-hash: "), hash) << again.text;
    EXPECT_EQ(value_of(again.text, "outcome: "), outcome) << again.text;
    EXPECT_NE(again.text.find("\nrecord: reproduced (trace-hash and outcome as recorded)\n"), std::string::npos)
        << again.text;
  }

 private:
  std::filesystem::path dir_;
};

TEST_F(record_files, run_save_replays_the_same_run_pass_or_fail) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  // Every kind of option: PCT's, a preemption bound, faults, swarm and knobs.
  const std::string options =
      " --strategy pct --depth 2 --pct-steps 400 --step-budget 900000 --cores 3 --preemptions 40"
      " --fault inbox_full=0.05 --fault spurious_wake=0.125 --swarm --param tasks=9 --param wakers=2";
  const std::string file = path("run.json");
  const output ran = shell(binary() + " run --scenario wake_storm --seed 17" + options + " --save " + file);
  ASSERT_EQ(ran.status, exit_pass) << ran.text;
  EXPECT_NE(ran.text.find("\nsaved: " + file + " (build "), std::string::npos) << ran.text;
  expect_replays(file, value_of(ran.text, "trace-hash: "), "pass");
  // The record's own options print the same replay line as the run.
  const output again = shell(binary() + " replay " + file);
  EXPECT_EQ(value_of(again.text, "replay: "), value_of(ran.text, "replay: "));

  // A failing run (the step budget runs out) is saved and replays as a failure.
  const std::string failing = path("run-fail.json");
  const output failed = shell(binary() + " run --scenario wake_storm --seed 0 --step-budget 300 --save " + failing);
  ASSERT_EQ(failed.status, exit_failed) << failed.text;
  expect_replays(failing, value_of(failed.text, "trace-hash: "), "fail");
  const auto doc = nlohmann::json::parse(slurp(failing));
  EXPECT_EQ(doc.at("command"), "run");
  EXPECT_EQ(doc.at("outcome"), "fail");
  EXPECT_EQ(doc.at("failure").get<std::string>().rfind("livelock:", 0), 0u) << doc.dump();
}

TEST_F(record_files, fuzz_save_holds_the_lowest_failing_seed) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string file = path("fuzz.json");
  const output fuzz = shell(binary() + " fuzz --scenario wake_storm --seeds 30 --start 5 --jobs 2 --step-budget 300"
                                       " --save " + file);
  ASSERT_EQ(fuzz.status, exit_failed) << fuzz.text;
  const auto first_fail = fuzz.text.find("fail: seed=");
  ASSERT_NE(first_fail, std::string::npos) << fuzz.text;
  const std::string seed = fuzz.text.substr(first_fail + 11, fuzz.text.find(':', first_fail + 11) - first_fail - 11);
  const auto doc = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(doc.at("seed"), seed);
  EXPECT_EQ(doc.at("command"), "fuzz");
  // The hash of that seed run alone.
  const output single = shell(binary() + " run --scenario wake_storm --step-budget 300 --seed " + seed);
  ASSERT_EQ(single.status, exit_failed) << single.text;
  expect_replays(file, value_of(single.text, "trace-hash: "), "fail");

  // With --shrink, the minimal case is saved.
  const std::string shrunk = path("fuzz-shrink.json");
  const output fs = shell(binary() + " fuzz --scenario wake_storm --seeds 10 --step-budget 300 --shrink --max-runs 40"
                                     " --save " + shrunk);
  ASSERT_EQ(fs.status, exit_failed) << fs.text;
  expect_replays(shrunk, value_of(fs.text, "trace-hash: "), "fail");

  // Nothing failed: no record, and an old file at that path is gone.
  const std::string none = path("none.json");
  std::ofstream(none) << "stale";
  const output clean = shell(binary() + " fuzz --scenario wake_storm --seeds 3 --save " + none);
  ASSERT_EQ(clean.status, exit_pass) << clean.text;
  EXPECT_FALSE(std::filesystem::exists(none));
  EXPECT_NE(clean.text.find("saved: nothing (no failing case)"), std::string::npos) << clean.text;
}

TEST_F(record_files, shrink_save_holds_the_minimal_case) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string file = path("shrink.json");
  const output shrunk =
      shell(binary() + " shrink --scenario wake_storm --seed 0 --step-budget 300 --max-runs 60 --save " + file);
  ASSERT_EQ(shrunk.status, exit_pass) << shrunk.text;
  expect_replays(file, value_of(shrunk.text, "trace-hash: "), "fail");
  const auto doc = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(doc.at("command"), "shrink");
  const std::string replay = value_of(shrunk.text, "replay: ");
  EXPECT_NE(replay.find("--seed " + doc.at("seed").get<std::string>() + " "), std::string::npos) << replay;
}

TEST_F(record_files, a_record_of_another_build_is_refused_naming_both_unless_forced) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string file = path("mine.json");
  const output ran = shell(binary() + " run --scenario inbox_overflow --seed 4 --save " + file);
  ASSERT_EQ(ran.status, exit_pass) << ran.text;
  auto doc = nlohmann::json::parse(slurp(file));
  const std::string mine = doc.at("build");
  const std::string other = mine == "0123456789abcdef" ? "fedcba9876543210" : "0123456789abcdef";
  doc["build"] = other;
  const std::string foreign = path("foreign.json");
  std::ofstream(foreign) << doc.dump(2);

  const output refused = shell_raw(binary() + " replay " + foreign + " 2>&1 >/dev/null");
  EXPECT_EQ(refused.status, exit_foreign_record) << refused.text;
  EXPECT_EQ(refused.text, "weft-sim: record: '" + foreign + "': written by build " + other + ", this is build " + mine +
                              "; replay it with the binary that wrote it, or pass --force\n");
  const output ran_nothing = shell_raw(binary() + " replay " + foreign + " 2>/dev/null");
  EXPECT_EQ(ran_nothing.text.find("outcome:"), std::string::npos) << ran_nothing.text;

  const output forced = shell(binary() + " replay " + foreign + " --force");
  EXPECT_EQ(forced.status, exit_pass) << forced.text;
  EXPECT_NE(forced.text.find("build " + other + " (this is build " + mine + "; --force)"), std::string::npos)
      << forced.text;
  EXPECT_EQ(value_of(forced.text, "trace-hash: "), value_of(ran.text, "trace-hash: "));
}

// A record whose run goes differently now (here: an edited hash) says so; the exit status is the
// run's, as for `run`.
TEST_F(record_files, a_record_that_does_not_reproduce_says_so) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string file = path("edited.json");
  ASSERT_EQ(shell(binary() + " run --scenario wake_storm --seed 2 --save " + file).status, exit_pass);
  auto doc = nlohmann::json::parse(slurp(file));
  doc["trace-hash"] = "00000000000000aa";
  doc["outcome"] = "fail";
  std::ofstream(file, std::ios::trunc) << doc.dump();
  const output again = shell(binary() + " replay " + file);
  EXPECT_EQ(again.status, exit_pass) << again.text;
  EXPECT_NE(again.text.find("\nrecord: NOT reproduced: the record has trace-hash 00000000000000aa, outcome fail\n"),
            std::string::npos)
      << again.text;
}

TEST_F(record_files, replay_takes_a_record_or_the_flags_but_not_both) {
  if (binary().empty()) GTEST_SKIP() << "WEFT_SIM_BIN not set";
  const std::string file = path("r.json");
  ASSERT_EQ(shell(binary() + " run --scenario wake_storm --seed 1 --save " + file).status, exit_pass);
  const struct {
    std::string args;
    std::string message;
    int status;
  } bad[] = {
      {"replay " + file + " --seed 2", "weft-sim: --seed: cannot be combined with a record FILE", exit_usage},
      {"replay " + file + " --cores 2", "weft-sim: --cores: cannot be combined with a record FILE", exit_usage},
      {"replay --scenario wake_storm", "weft-sim: --seed: is required (or give a record FILE)", exit_usage},
      {"replay --seed 1", "weft-sim: --scenario: is required (or give a record FILE)", exit_usage},
      {"replay --scenario wake_storm --seed 1 --force", "weft-sim: --force: applies only to a record FILE", exit_usage},
      {"replay " + path("missing.json"),
       "weft-sim: record: '" + path("missing.json") + "': cannot open it for reading: No such file or directory",
       exit_bad_record},
      {"replay /dev/zero", "weft-sim: record: '/dev/zero': larger than 1048576 bytes; not a record", exit_bad_record},
      {"run --scenario wake_storm --seed 1 --save /nonexistent-weft-dir/r.json", "weft-sim: --save: cannot open", exit_io},
  };
  for (const auto& b : bad) {
    const output err = shell_raw(binary() + " " + b.args + " 2>&1 >/dev/null");
    EXPECT_EQ(err.status, b.status) << b.args << "\n" << err.text;
    EXPECT_EQ(err.text.rfind(b.message, 0), 0u) << b.args << "\n" << err.text;
    EXPECT_EQ(std::count(err.text.begin(), err.text.end(), '\n'), 1) << b.args << "\n" << err.text;
  }
}

// ---- the parser fuzz -------------------------------------------------------------------------

// A record of a cheap test scenario (test_fails_with_knob: no threads) with every option set.
std::string base_record() {
  weft::sim::record r;
  r.build = weft::sim::build_id();
  r.command = "run";
  r.scenario = "test_fails_with_knob";
  r.seed = 7;
  r.opts.strategy = weft::sim::strategy_kind::pct;
  r.opts.pct_depth = 2;
  r.opts.pct_steps = 50;
  r.opts.step_budget = 1'000;
  r.opts.cores = 2;
  r.opts.max_preemptions = 3;
  r.opts.faults.rate_ppm[0] = 250'000;
  r.opts.swarm = true;
  r.opts.params["n"] = 6;
  r.passed = false;
  r.failure = "n too large";
  r.trace_hash = 0x0123456789abcdefULL;
  return weft::sim::render_record(r);
}

// Values a hostile record might put anywhere.
std::vector<nlohmann::json> hostile_values() {
  std::vector<nlohmann::json> v = {
      nullptr, true, false, 0, -1, 1, 2, 1.5, -0.0, 1e300, "", "0", "-1", "18446744073709551615",
      "18446744073709551616", "99999999999999999999999", "1e9", " 1", "+1", "0x10", "pct", "random", "nan",
      "inf", nlohmann::json::array(), nlohmann::json::object(), nlohmann::json::array({"n=1", "n=2"}),
      nlohmann::json::array({1, 2}), std::string(5'000, 'a'), std::string("a\nb\x01\x7f"), "test_lost_notify",
      "wake_storm", "inbox_full=2", "inbox_full=0.0000001", "n=9223372036854775808", "n=-9223372036854775808",
      std::uint64_t{18446744073709551615ULL}, std::int64_t{-9223372036854775807LL - 1}};
  return v;
}

// One mutation of `base`, chosen by `rng`: byte-level damage or a field replaced, removed or added.
std::string mutate(const std::string& base, std::mt19937& rng) {
  const auto below = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::string text = base;
  switch (below(8)) {
    case 0:  // truncated
      return text.substr(0, below(text.size()));
    case 1:  // bytes flipped
      for (std::size_t k = 1 + below(4); k > 0; --k) text[below(text.size())] = static_cast<char>(below(256));
      return text;
    case 2:  // a range cut out
    {
      const std::size_t at = below(text.size());
      return text.erase(at, below(text.size() - at) + 1);
    }
    case 3:  // random bytes
    {
      std::string noise(below(300), '\0');
      for (char& c : noise) c = static_cast<char>(below(256));
      return noise;
    }
    case 4:  // deep nesting
    {
      const std::size_t depth = 1 + below(20'000);
      return std::string(depth, '[') + (below(2) == 0 ? std::string(depth, ']') : "");
    }
    default:
      break;
  }
  nlohmann::json doc = nlohmann::json::parse(base);
  const auto values = hostile_values();
  nlohmann::json& target = below(2) == 0 ? doc : doc["options"];
  std::vector<std::string> keys;
  for (const auto& item : target.items()) keys.push_back(item.key());
  const std::string key = keys[below(keys.size())];
  switch (below(4)) {
    case 0: target.erase(key); break;
    case 1: target["unknown_" + std::to_string(below(10))] = values[below(values.size())]; break;
    default: target[key] = values[below(values.size())]; break;
  }
  return doc.dump();
}

TEST(record_parser, thousands_of_mutated_records_replay_or_fail_in_one_line) {
  const std::string base = base_record();
  // The unmutated base loads and runs (its scenario fails at n >= 5).
  const auto loaded = weft::sim::load_record(base, weft::sim::build_id(), false);
  EXPECT_FALSE(weft::sim::run(*loaded.scn, loaded.rec.seed, loaded.rec.opts).passed);

  std::mt19937 rng(20261205);  // fixed: the same records every run
  const std::filesystem::path file =
      std::filesystem::path(::testing::TempDir()) / ("weft-record-fuzz-" + std::to_string(::getpid()) + ".json");
  constexpr int records = 10'000;
  constexpr int through_the_cli_every = 50;  // the rest go to the parser directly, faster
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < records; ++i) {
    const std::string text = mutate(base, rng);
    if (i % through_the_cli_every == 0) {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
      const cli_output r = cli({"replay", file.string()});
      const bool refused_record = r.status == exit_bad_record || r.status == exit_foreign_record;
      ASSERT_TRUE(r.status == exit_pass || r.status == exit_failed || refused_record)
          << r.status << "\n" << text << "\n" << r.err;
      if (refused_record) {
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << text << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("weft-sim: record: '", 0), 0u) << r.err;
        EXPECT_EQ(r.out, "") << text;
      } else {
        EXPECT_NE(r.out.find("\noutcome: "), std::string::npos) << r.out;
      }
      continue;
    }
    try {
      const auto l = weft::sim::load_record(text, weft::sim::build_id(), false);
      (void)weft::sim::run(*l.scn, l.rec.seed, l.rec.opts);
      ++accepted;
    } catch (const weft::sim::invalid_options& e) {
      ++refused;
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_LE(what.size(), 600u) << what;
      EXPECT_EQ(e.flag(), "record") << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an invalid_options: " << e.what() << "\n" << text;
    }
  }
  std::filesystem::remove(file);
  // Both outcomes were exercised, so the mutations neither all broke nor all kept the record.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 5'000);
  std::printf("records: %d accepted, %d refused\n", accepted, refused);
}

TEST(record_parser, each_kind_of_bad_record_names_what_is_wrong) {
  auto doc = nlohmann::json::parse(base_record());
  const auto refusal = [](const std::string& text) -> std::string {
    try {
      (void)weft::sim::load_record(text, weft::sim::build_id(), false);
    } catch (const weft::sim::invalid_options& e) {
      return e.what();
    }
    return "accepted";
  };
  const auto with = [&](const char* key, const nlohmann::json& value) {
    auto d = doc;
    d[key] = value;
    return d.dump();
  };
  const auto with_option = [&](const char* key, const nlohmann::json& value) {
    auto d = doc;
    d["options"][key] = value;
    return d.dump();
  };
  EXPECT_EQ(refusal(base_record().substr(0, 40)), "record: not valid JSON (malformed or truncated)");
  EXPECT_EQ(refusal("[]"), "record: not a JSON object");
  EXPECT_EQ(refusal(with("format", "other")), "record: not a weft-sim record (its \"format\" is not \"weft-sim record\")");
  EXPECT_EQ(refusal(with("version", 2)), "record: version 2 is not supported; this weft-sim reads version 1");
  EXPECT_EQ(refusal(with("version", "1")), "record: field \"version\" is not a number");
  EXPECT_EQ(refusal(with("extra", 1)), "record: unknown field \"extra\"");
  EXPECT_EQ(refusal(with_option("color", "red")), "record: unknown field \"options.color\"");
  EXPECT_EQ(refusal(with("seed", 7)), "record: field \"seed\" is not a string");
  EXPECT_EQ(refusal(with("seed", "18446744073709551616")),
            "record: seed: 18446744073709551616 is outside the accepted range [0, 18446744073709551615]");
  EXPECT_EQ(refusal(with_option("cores", "0")), "record: --cores: 0 is outside the accepted range [1, 4096]");
  EXPECT_EQ(refusal(with_option("depth", "1025")), "record: --depth: 1025 is outside the accepted range [1, 1024]");
  EXPECT_EQ(refusal(with_option("strategy", "dfs")), "record: --strategy: 'dfs' is not a strategy; accepted: random, pct");
  EXPECT_EQ(refusal(with_option("param", nlohmann::json::array({"n=11"}))),
            "record: --param: n=11 is outside the accepted range [3, 10]");
  EXPECT_EQ(refusal(with("scenario", "no\nsuch")), "record: no scenario named 'no\\nsuch' in this binary (see `list`)");
  EXPECT_EQ(refusal(with("build", "zz")), "record: field \"build\" is not 16 hex digits");
  EXPECT_EQ(refusal(with("trace-hash", 5)), "record: field \"trace-hash\" is not a string");
  EXPECT_EQ(refusal(R"({"format": "weft-sim record", "format": "weft-sim record"})"),
            "record: field \"format\" is given twice");
  EXPECT_EQ(refusal(with_option("fault", nlohmann::json::array({nlohmann::json::array()}))),
            "record: nested deeper than a record's 3 levels");
  auto missing = doc;
  missing.erase("options");
  EXPECT_EQ(refusal(missing.dump()), "record: missing field \"options\"");
  EXPECT_EQ(refusal(std::string(weft::sim::record_bytes_max + 1, ' ')),
            "record: larger than 1048576 bytes; not a record");
  // A NUL byte would end the parser's input early: after the record, inside it, or alone.
  EXPECT_EQ(refusal(base_record() + std::string(1, '\0')), "record: contains a NUL byte; not a record");
  EXPECT_EQ(refusal(base_record() + std::string(1, '\0') + "{\"format\": 1}"),
            "record: contains a NUL byte; not a record");
  EXPECT_EQ(refusal(std::string(1, '\0') + base_record()), "record: contains a NUL byte; not a record");
  // A leading UTF-8 byte order mark is what some editors write; the record still reads.
  EXPECT_EQ(refusal("\xEF\xBB\xBF" + base_record()), "accepted");
}

}  // namespace
