// The library API checks its inputs before any simulation: run() rejects options outside their
// ranges and --param knobs the scenario does not declare or outside the declared range; a run
// whose scenario reads an undeclared knob, or picks a value outside its range, fails; shrink()
// checks its limits, lowers a knob no further than its declared minimum and tries no seed past
// 2^64 - 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "../src/shrink.hpp"

namespace {

const weft::sim::scenario& named(const char* name) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  if (s == nullptr) throw std::logic_error(std::string("no scenario ") + name);
  return *s;
}

std::string invalid_flag(const weft::sim::scenario& s, const weft::sim::options& o) {
  try {
    (void)weft::sim::run(s, 1, o);
  } catch (const weft::sim::invalid_options& e) {
    return e.flag();
  }
  return "(accepted)";
}

TEST(library_validation, run_rejects_options_and_knobs_outside_their_ranges) {
  const auto& race = named("shutdown_race");
  weft::sim::options o;
  o.params["workers"] = 0;
  EXPECT_EQ(invalid_flag(race, o), "--param");
  o.params = {{"nosuch", 1}};
  EXPECT_EQ(invalid_flag(race, o), "--param");
  o.params = {{"stop_mode", 4}};
  EXPECT_EQ(invalid_flag(race, o), "--param");
  o.params.clear();
  o.cores = 0;
  EXPECT_EQ(invalid_flag(race, o), "--cores");
  o.cores = 4;
  o.pct_depth = 0;
  EXPECT_EQ(invalid_flag(race, o), "--depth");
  o.pct_depth = 3;
  o.step_budget = 0;
  EXPECT_EQ(invalid_flag(race, o), "--step-budget");
  o.step_budget = 1'000;
  o.faults.rate_ppm[0] = weft::sim::ppm_one + 1;
  EXPECT_EQ(invalid_flag(race, o), "--fault");
}

TEST(library_validation, a_run_fails_when_its_scenario_reads_an_undeclared_knob) {
  const auto r = weft::sim::run(named("test_undeclared_knob"), 1, {});
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_NE(r.failures.front().find("knob 'undeclared'"), std::string::npos) << r.failures.front();
}

TEST(library_validation, a_run_fails_when_its_scenario_chooses_a_knob_outside_the_range) {
  const auto r = weft::sim::run(named("test_knob_fallback_out_of_range"), 1, {});
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_NE(r.failures.front().find("n=11, outside its declared range [3, 10]"), std::string::npos)
      << r.failures.front();
}

TEST(library_validation, shrink_checks_its_limits) {
  const auto& s = named("test_fails_with_knob");
  weft::sim::shrink_limits limits;
  limits.max_runs = 0;
  EXPECT_THROW((void)weft::sim::shrink(s, 1, {}, limits), weft::sim::invalid_options);
  limits.max_runs = 100;
  limits.seed_tries = 0;
  EXPECT_THROW((void)weft::sim::shrink(s, 1, {}, limits), weft::sim::invalid_options);
}

TEST(library_validation, shrink_lowers_a_knob_only_to_its_declared_minimum) {
  weft::sim::shrink_limits limits;
  limits.seed_tries = 1;
  limits.param_floor = -5;
  const auto r = weft::sim::shrink(named("test_fails_with_knob"), 0, {}, limits);  // seed 0 fails at any n
  ASSERT_TRUE(r.reproduced);
  EXPECT_EQ(r.minimal.result.params.at("n"), 3);
}

TEST(library_validation, shrink_tries_no_seed_past_the_largest) {
  constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  weft::sim::shrink_limits limits;
  limits.seed_tries = 2;  // top and then nothing: top + 1 would be seed 0, where every n fails
  const auto r = weft::sim::shrink(named("test_fails_with_knob"), top, {}, limits);
  ASSERT_TRUE(r.reproduced);
  EXPECT_EQ(r.minimal.seed, top);
  EXPECT_EQ(r.minimal.result.params.at("n"), 5);
}

}  // namespace

namespace {
void first_body(weft::sim::context&) {}
void second_body(weft::sim::context&) {}
}  // namespace

// Registrations run before main, in link order: a name defined twice, or a doc or knobs for a name
// no scenario defines, is a problem the registry keeps for the command line to refuse, rather
// than one body silently winning.
TEST(library_validation, a_registry_names_each_registration_mistake) {
  weft::sim::registry r;
  r.add({"twice", "", &first_body, {}});
  r.add({"twice", "", &second_body, {}});
  r.describe("twice", "one line");
  r.describe("twice", "another line");
  r.declare_knobs("twice", {{"n", 1, 2, "a knob"}});
  r.declare_knobs("twice", {{"n", 1, 3, "a knob"}});
  r.describe("typo", "documents nothing");
  r.declare_knobs("other_typo", {{"k", 0, 1, "a knob"}});
  const std::vector<std::string> expected = {
      "scenario 'twice' is defined twice (two WEFT_SIM_SCENARIO(twice))",
      "scenario 'twice' is described twice (two WEFT_SIM_SCENARIO_DOC(twice))",
      "scenario 'twice' declares its knobs twice (two WEFT_SIM_SCENARIO_KNOBS(twice))",
      "'typo' has a doc or knobs but no WEFT_SIM_SCENARIO(typo)",
      "'other_typo' has a doc or knobs but no WEFT_SIM_SCENARIO(other_typo)",
  };
  EXPECT_EQ(r.problems(), expected);
  const weft::sim::scenario* kept = r.find("twice");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->description, "one line");
  ASSERT_EQ(kept->knobs.size(), 1u);
  EXPECT_EQ(kept->knobs[0].max, 2);
  EXPECT_TRUE(weft::sim::registry::global().problems().empty());
}
