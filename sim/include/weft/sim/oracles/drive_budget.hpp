// weft/sim/oracles/drive_budget.hpp — oracle: a host's stepping calls on a local_domain keep
// their budget (local_domain.hpp):
//   * run_n(n) "runs up to n loop turns" and "returns the turns it ran": the count it returns is
//     at most n;
//   * run_for(budget) reports its turns in run_stats::drive_steps, and "a zero budget does
//     nothing": zero turns, nothing run;
//   * the returned count does not understate the work: each turn runs at most one macrotask
//     (event-loop.md, "The turn"), so the macrotasks the scenario counted during the call are at
//     most the turns reported. Counted independently of the runtime, this also bounds the turns
//     run_n really ran: macrotasks run <= turns reported <= n.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class drive_budget_ledger {
 public:
  explicit drive_budget_ledger(context& sim) : sim_(sim) {}

  // First thing in every macrotask the scenario counts (any thread it runs on is the host's).
  void macrotask_ran() noexcept { ++macrotasks_; }

  // Before a stepping call: what to hand to the matching check afterwards.
  std::uint64_t before_call() const noexcept { return macrotasks_; }

  void after_run_n(std::uint64_t requested, std::uint64_t returned, std::uint64_t before) {
    ++calls_;
    if (returned > requested) {
      sim_.fail("drive budget oracle: run_n(" + std::to_string(requested) + ") returned " + std::to_string(returned) +
                " turns");
    }
    check_work("run_n(" + std::to_string(requested) + ")", returned, before);
  }

  void after_run_for(bool zero_budget, std::uint64_t drive_steps, std::uint64_t before) {
    ++calls_;
    if (zero_budget && drive_steps != 0) {
      sim_.fail("drive budget oracle: run_for with a zero budget ran " + std::to_string(drive_steps) + " turns");
    }
    check_work("run_for", drive_steps, before);
  }

  std::uint64_t calls() const noexcept { return calls_; }

 private:
  void check_work(const std::string& call, std::uint64_t turns, std::uint64_t before) {
    const std::uint64_t ran = macrotasks_ - before;
    if (ran > turns) {
      sim_.fail("drive budget oracle: " + call + " ran " + std::to_string(ran) + " macrotasks in the " +
                std::to_string(turns) + " turns it reported (at most one a turn)");
    }
  }

  context& sim_;
  std::uint64_t macrotasks_ = 0;
  std::uint64_t calls_ = 0;
};

}  // namespace weft::sim::oracles
