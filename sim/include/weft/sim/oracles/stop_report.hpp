// weft/sim/oracles/stop_report.hpp — oracle: stop() reports what its shutdown cut short.
//
// docs/shutdown.md: stop() returns `complete` only when nothing was cut short, else `incomplete`
// with counts, `tasks_cancelled` counting every unfinished task its workers cancelled (adopted
// ones, and accepted cross-thread spawns still in an inbox). The scenario tells the ledger of
// every task handle that ended `cancelled` when no abort of its own could have done it; the
// ledger then holds stop()'s answer against them:
//   * an outcome of `complete` with any such handle is a violation;
//   * `tasks_cancelled` below the number of such handles is a violation (it may be above: a
//     child whose cancelled parent dropped its handle unread is counted but never reported).
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <string>

#include <weft/sim/context.hpp>
#include <weft/stop_outcome.hpp>

namespace weft::sim::oracles {

class stop_report_ledger {
 public:
  explicit stop_report_ledger(context& sim) : sim_(sim) {}

  // A task handle ended `cancelled`, and only the stop can have cancelled it.
  void cancelled_by_stop() noexcept { ++cancelled_; }

  // Judges stop()'s answer against the cancelled handles reported so far (call after every
  // handle ended). Returns true when nothing was violated.
  bool check(const stop_outcome& out) {
    if (out.is_error()) return true;  // nothing reported: the scenario judges an error itself
    if (out.is_complete() && cancelled_ > 0) {
      sim_.fail("stop-report oracle: stop() answered complete, yet " + std::to_string(cancelled_) +
                " task handles ended cancelled by the shutdown");
      return false;
    }
    if (out.is_incomplete() && out.counts().tasks_cancelled < cancelled_) {
      sim_.fail("stop-report oracle: stop() counted tasks_cancelled=" + std::to_string(out.counts().tasks_cancelled) +
                ", but " + std::to_string(cancelled_) + " task handles ended cancelled by the shutdown");
      return false;
    }
    return true;
  }

  std::uint64_t cancelled() const noexcept { return cancelled_; }

 private:
  context& sim_;
  std::uint64_t cancelled_ = 0;
};

}  // namespace weft::sim::oracles
