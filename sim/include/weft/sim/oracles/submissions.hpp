// weft/sim/oracles/submissions.hpp — oracle: every accepted submission runs exactly once, and
// nothing refused ever runs.
//
// A checker only: it observes (scenarios call accepted/refused/ran) and judges; it injects
// nothing. Its own state is plain data: all simulated threads share one OS thread, and the oracle
// is not part of the system under test, so touching it is not a scheduling point.
// Order-insensitive on purpose: a macrotask may run before its producer has even seen `accepted`.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/queue_error.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class submission_ledger {
 public:
  void accepted(std::uint64_t id) { ++entries_[id].accepted; }
  void refused(std::uint64_t id, queue_error why) {
    auto& e = entries_[id];
    ++e.refused;
    e.reason = why;
  }
  void ran(std::uint64_t id) { ++entries_[id].runs; }

  std::uint64_t count_accepted() const { return count([](const entry& e) { return e.accepted > 0; }); }
  std::uint64_t count_refused() const { return count([](const entry& e) { return e.refused > 0; }); }

  // Call when nothing can run any more (the loop is gone or drained for good). Reports every
  // violation (the first few verbatim) to `sim`; returns true when there was none.
  bool check(context& sim) const {
    std::uint64_t violations = 0;
    for (const auto& [id, e] : entries_) {
      std::string what;
      if (e.accepted + e.refused != 1) {
        what = "was answered " + std::to_string(e.accepted + e.refused) + " times";
      } else if (e.accepted == 1 && e.runs == 0) {
        what = "was accepted but never ran (stranded)";
      } else if (e.accepted == 1 && e.runs > 1) {
        what = "was accepted and ran " + std::to_string(e.runs) + " times";
      } else if (e.refused == 1 && e.runs > 0) {
        what = std::string("was refused (") + (e.reason == queue_error::full ? "full" : "closed") + ") but ran";
      }
      if (what.empty()) continue;
      if (++violations <= 5) sim.fail("submission oracle: submission " + std::to_string(id) + " " + what);
    }
    if (violations > 5) sim.fail("submission oracle: " + std::to_string(violations - 5) + " more violations");
    return violations == 0;
  }

 private:
  struct entry {
    std::uint32_t accepted = 0;
    std::uint32_t refused = 0;
    std::uint32_t runs = 0;
    queue_error reason = queue_error::closed;
  };
  template <class P>
  std::uint64_t count(P pred) const {
    std::uint64_t n = 0;
    for (const auto& [id, e] : entries_) n += pred(e) ? 1 : 0;
    return n;
  }
  std::map<std::uint64_t, entry> entries_;  // ordered: reports come out in id order
};

}  // namespace weft::sim::oracles
