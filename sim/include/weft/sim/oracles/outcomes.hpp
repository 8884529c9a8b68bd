// weft/sim/oracles/outcomes.hpp — oracle: every admitted task reaches exactly one terminal
// outcome, and it is the expected one.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class outcome_ledger {
 public:
  explicit outcome_ledger(context& sim) : sim_(sim) {}

  void admitted(std::uint64_t id, std::string expected) {
    auto& e = entries_[id];
    ++e.admitted;
    e.expected = std::move(expected);
  }
  void terminal(std::uint64_t id, const std::string& outcome) {
    auto& e = entries_[id];
    ++e.terminals;
    if (e.admitted == 0) {
      sim_.fail("outcome oracle: task " + std::to_string(id) + " reached '" + outcome + "' but was never admitted");
    } else if (e.terminals > 1) {
      sim_.fail("outcome oracle: task " + std::to_string(id) + " reached a second terminal outcome '" + outcome + "'");
    } else if (outcome != e.expected && !(panics_allowed_ && outcome == "panicked")) {
      sim_.fail("outcome oracle: task " + std::to_string(id) + " ended '" + outcome + "', expected '" + e.expected +
                "'");
    }
  }

  // With the task_exception fault on, any await may throw: `panicked` is then an allowed outcome
  // of every task besides the expected one.
  void allow_panics(bool allowed) noexcept { panics_allowed_ = allowed; }

  // Call at the end: every admitted task reached a terminal outcome.
  bool check() const {
    std::uint64_t missing = 0;
    for (const auto& [id, e] : entries_) {
      if (e.admitted == 0 || e.terminals > 0) continue;
      if (++missing <= 5) sim_.fail("outcome oracle: task " + std::to_string(id) + " never reached a terminal outcome");
    }
    return missing == 0;
  }

 private:
  struct entry {
    std::uint32_t admitted = 0;
    std::uint32_t terminals = 0;
    std::string expected;
  };
  context& sim_;
  std::map<std::uint64_t, entry> entries_;
  bool panics_allowed_ = false;
};

}  // namespace weft::sim::oracles
