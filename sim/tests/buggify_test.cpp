// buggify_test.cpp — fault sites and coverage probes in a service's own code (weft/buggify.hpp):
// a site stays quiet unless the run turns the `buggify` kind on; which sites are active is a
// function of the seed and the name; a bug that only a misbehaving site reaches is found with the
// kind on and missed without it; probes report what runs reached, and what none did.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/buggify.hpp>
#include <weft/sim/check.hpp>
#include <weft/sim/probes.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace {

using weft::sim::check;
using weft::sim::check_result;

weft::sim::options buggify_at(std::uint32_t ppm) {
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::buggify)] = ppm;
  return o;
}

// A store that writes `len` bytes in pieces: a piece may come up short when its site misbehaves.
// The careful writer loops until everything is written; the careless one trusts the first piece.
std::size_t write_piece(std::size_t len) {
  if (weft::sim::buggify("store.short_write") && len > 1) return len / 2;
  return len;
}

std::size_t store(std::size_t len, bool careless) {
  std::size_t written = write_piece(len);
  if (careless) return written;
  while (written < len) written += write_piece(len - written);
  return written;
}

void store_body(weft::sim::context& sim, bool careless) {
  constexpr std::size_t record = 64;
  for (int i = 0; i < 8; ++i) {
    if (store(record, careless) != record) sim.fail("a record was stored short");
  }
}

TEST(buggify, stays_false_unless_the_run_turns_the_kind_on) {
  const check_result r = check({.seeds = 200}, [](weft::sim::context& sim) {
    for (int i = 0; i < 100; ++i) {
      if (weft::sim::buggify("quiet.site")) sim.fail("buggify answered true with the kind off");
    }
  });
  EXPECT_TRUE(r.passed) << r.message();
}

TEST(buggify, a_bug_behind_a_site_is_found_only_with_the_kind_on) {
  // Without the kind the careless store is never short: its bug is out of any run's reach.
  const check_result off = check({.seeds = 300}, [](weft::sim::context& sim) { store_body(sim, true); });
  EXPECT_TRUE(off.passed) << off.message();

  const check_result careful =
      check({.seeds = 300, .sim = buggify_at(250'000)}, [](weft::sim::context& sim) { store_body(sim, false); });
  EXPECT_TRUE(careful.passed) << careful.message();

  const check_result careless = check({.seeds = 300, .sim = buggify_at(250'000), .shrink = false},
                                      [](weft::sim::context& sim) { store_body(sim, true); });
  ASSERT_FALSE(careless.passed);
  ASSERT_FALSE(careless.failures.empty());
  EXPECT_NE(careless.failures.front().find("stored short"), std::string::npos) << careless.message();
}

// What buggify answered, per site, over one run of `names` (each asked `asks` times, in order).
std::vector<std::vector<bool>> answers(std::uint64_t seed, const std::vector<std::string>& names, int asks) {
  std::vector<std::vector<bool>> out(names.size());
  weft::sim::scenario s{"buggify_answers", "", [&](weft::sim::context&) {
                          for (int i = 0; i < asks; ++i) {
                            for (std::size_t n = 0; n < names.size(); ++n) out[n].push_back(weft::sim::buggify(names[n]));
                          }
                        }};
  const weft::sim::run_result r = weft::sim::run(s, seed, buggify_at(weft::sim::ppm_one));
  EXPECT_TRUE(r.passed);
  return out;
}

TEST(buggify, a_site_is_active_for_a_whole_run_by_seed_and_name) {
  int active = 0;
  constexpr int seeds = 64;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    // At rate 1 an active site always answers true and an inactive one never does.
    const auto alone = answers(seed, {"site.a"}, 5);
    const bool on = alone[0].front();
    EXPECT_TRUE(std::all_of(alone[0].begin(), alone[0].end(), [&](bool b) { return b == on; })) << "seed " << seed;
    // Meeting another site first, or the same seed again, leaves that choice as it was.
    const auto after_other = answers(seed, {"site.b", "site.a"}, 1);
    EXPECT_EQ(after_other[1].front(), on) << "seed " << seed;
    EXPECT_EQ(answers(seed, {"site.a"}, 1)[0].front(), on) << "seed " << seed;
    active += on ? 1 : 0;
  }
  // About half the runs (buggify_site_active_ppm); both outcomes must occur.
  EXPECT_GT(active, seeds / 4);
  EXPECT_LT(active, seeds * 3 / 4);
}

TEST(buggify, a_firing_site_is_a_fault_event_naming_it) {
  weft::sim::options o = buggify_at(weft::sim::ppm_one);
  o.record_trace = true;
  weft::sim::scenario s{"buggify_trace", "", [](weft::sim::context&) {
                          static_cast<void>(weft::sim::buggify("traced.site"));
                        }};
  bool seen = false;
  for (std::uint64_t seed = 0; seed < 32 && !seen; ++seed) {
    const weft::sim::run_result r = weft::sim::run(s, seed, o);
    for (const auto& e : r.events) {
      if (e.op == "buggify" && e.line.find("traced.site") != std::string::npos) seen = true;
    }
    if (!seen) EXPECT_EQ(r.faults, 0u) << "a fault was counted but not traced, seed " << seed;
  }
  EXPECT_TRUE(seen);
}

void probed_body(weft::sim::context& sim) {
  WEFT_SIM_PROBE("probe_test.every_run");
  if (sim.chance(1, 4)) WEFT_SIM_PROBE("probe_test.some_runs");
  if (sim.seed() == ~std::uint64_t{0}) WEFT_SIM_PROBE("probe_test.never");
}

TEST(probes, every_probe_is_known_before_any_run) {
  const std::vector<std::string> names = weft::sim::registered_probes();
  for (const char* name : {"probe_test.every_run", "probe_test.some_runs", "probe_test.never"}) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), name)) << name;
  }
}

TEST(probes, a_campaign_reports_what_it_reached_and_what_it_never_did) {
  const check_result r = check({.seeds = 200}, probed_body);
  ASSERT_TRUE(r.passed) << r.message();
  const auto coverage = r.probes.coverage();
  auto find = [&](const std::string& name) {
    const auto it = std::find_if(coverage.begin(), coverage.end(), [&](const auto& c) { return c.name == name; });
    EXPECT_NE(it, coverage.end()) << name;
    return it == coverage.end() ? weft::sim::probe_coverage{} : *it;
  };
  EXPECT_EQ(find("probe_test.every_run").runs, 200u);
  EXPECT_EQ(find("probe_test.every_run").hits, 200u);
  const auto some = find("probe_test.some_runs");
  EXPECT_GT(some.runs, 0u);
  EXPECT_LT(some.runs, 200u);
  EXPECT_EQ(find("probe_test.never").runs, 0u);
  const auto missed = r.probes.never_hit();
  EXPECT_NE(std::find(missed.begin(), missed.end(), "probe_test.never"), missed.end());
  EXPECT_EQ(std::find(missed.begin(), missed.end(), "probe_test.every_run"), missed.end());
  const std::string m = r.message();
  EXPECT_NE(m.find("probe_test.every_run (200 runs, 200 hits)"), std::string::npos) << m;
  EXPECT_NE(m.find("never reached: "), std::string::npos) << m;
  EXPECT_NE(m.find("probe_test.never"), std::string::npos) << m;
}

}  // namespace
