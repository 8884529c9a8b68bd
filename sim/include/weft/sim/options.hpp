// weft/sim/options.hpp — everything besides the seed that a run depends on.
//
// A run is a pure function of (scenario, seed, options). describe() prints the options in the
// form shown at the start of a run; replay_arguments() renders them as the CLI flags that
// reproduce the run. validate() checks every field against the ranges below (run() calls it
// first; the CLI checks the same ranges while parsing).
#pragma once

#include <weft/compiler_support.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <weft/platform/fault.hpp>

namespace weft::sim {

enum class strategy_kind : std::uint8_t {
  random,  // every scheduling choice uniform among the candidates
  pct,     // probabilistic concurrency testing: random priorities, `pct_depth - 1` change points
};

const char* to_string(strategy_kind k) noexcept;

inline constexpr std::size_t fault_kinds = static_cast<std::size_t>(platform::fault::count_);

// Per fault kind: the probability, in parts per million, that a fault point of that kind fires.
struct fault_plan {
  std::array<std::uint32_t, fault_kinds> rate_ppm{};  // all off by default
  bool any() const noexcept;
};

struct options {
  static constexpr std::uint64_t unbounded = std::numeric_limits<std::uint64_t>::max();
  strategy_kind strategy = strategy_kind::random;
  std::uint32_t pct_depth = 3;                 // d: the bug depth PCT targets (d - 1 change points)
  std::uint64_t pct_steps = 1'000;              // k: the step range change points are drawn from
  std::uint64_t step_budget = 5'000'000;       // livelock: more scheduling steps fail the run
  std::uint32_t cores = 4;                     // what hardware_concurrency() answers
  // Preemption bound: at most this many preemptions (a yield point where the running fiber could
  // go on but the strategy picks another); past it the running fiber always goes on. The strategy
  // is still asked (its random stream advances the same), so a run bounded at or above the
  // number of preemptions it makes is the unbounded run. Blocking and explicit yields still
  // switch. `shrink` lowers it.
  std::uint64_t max_preemptions = unbounded;
  fault_plan faults;
  bool swarm = false;                          // the seed picks its own fault mix (see engine)
  std::map<std::string, std::int64_t> params;  // scenario knobs (context::param)
  bool record_trace = false;                   // keep every event (text / Chrome output, diffs)
};

constexpr std::uint32_t ppm_one = 1'000'000;
// With the `buggify` fault kind on, each buggify site is active in a run with this probability
// (drawn from the seed and the site's name); an active site fires at the kind's rate. Half the
// sites quiet in each run lets a campaign meet every combination of misbehaving parts.
constexpr std::uint32_t buggify_site_active_ppm = 500'000;

// Accepted ranges of the options (inclusive). Fields not named here take their type's full range.
inline constexpr std::uint32_t min_pct_depth = 1;
inline constexpr std::uint32_t max_pct_depth = 1'024;  // d - 1 change points are drawn before the run
inline constexpr std::uint64_t min_pct_steps = 1;      // change points are drawn from steps [1, k]
inline constexpr std::uint64_t min_step_budget = 1;
inline constexpr std::uint32_t min_cores = 1;          // what hardware_concurrency() answers
inline constexpr std::uint32_t max_cores = 4'096;      // a runtime sizes its workers from it

// An option outside its accepted range. `flag` is the CLI flag of the field ("--cores", "--param"),
// which is also how describe() and replay_arguments() name it.
class invalid_options : public std::invalid_argument {
 public:
  invalid_options(std::string flag, const std::string& message)
      : std::invalid_argument(flag + ": " + message), flag_(std::move(flag)) {}
  const std::string& flag() const noexcept { return flag_; }

 private:
  std::string flag_;
};

// A --param naming a knob the scenario does not declare (weft-sim exits 5 for it, 2 for other
// invalid options).
class unknown_knob : public invalid_options {
 public:
  using invalid_options::invalid_options;
};

// "--cores: 0 is outside the accepted range [1, 4096]" as an invalid_options.
template <class T>
invalid_options out_of_range(const std::string& flag, const std::string& value, T min, T max) {
  return invalid_options(flag, value + " is outside the accepted range [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]");
}

// Throws out_of_range(flag, value, min, max) unless value is in [min, max].
template <class T>
void check_range(const std::string& flag, T value, T min, T max = std::numeric_limits<T>::max()) {
  if (value < min || value > max) throw out_of_range(flag, std::to_string(value), min, max);
}

// Throws invalid_options for the first field outside its range (the scenario knobs in `params`
// are checked against the scenario's declaration by validate(scenario, options), see run.hpp).
void validate(const options& o);

// The options a run with `seed` actually uses: with `swarm`, each fault kind left at rate 0 is
// switched on or off, and given a rate, from the seed's swarm stream.
options resolve(const options& o, std::uint64_t seed);

// "strategy=pct depth=3 pct-steps=20000 step-budget=5000000 cores=4 faults=none params=none"
std::string describe(const options& o);
// The CLI flags that reproduce `o` (without --scenario/--seed).
std::string replay_arguments(const options& o);
// The same flags as (flag, value) pairs in that order; a flag that takes no value (--swarm) has
// an empty one. Replay records (docs/simulator.md, "Replay records") store these texts.
std::vector<std::pair<std::string, std::string>> replay_flags(const options& o);

}  // namespace weft::sim
