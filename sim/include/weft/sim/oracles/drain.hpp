// weft/sim/oracles/drain.hpp — oracle: `drained` means every admitted task has finished.
//
// docs/shutdown.md: runtime::drain() closes admission and returns `drain_outcome::drained` only
// once the runtime's task count is zero, and a submission counts from before its admission
// check. So when drain() answers `drained`, the body of every task that was (or will ever be)
// admitted has already run to its end. The scenario reports each body's end as it happens and
// the drain's answer the moment drain() returns; after the stop it reports how every submission
// ended. An admitted submission (any outcome but `rejected`) whose body had not finished when a
// `drained` answer came back is a violation: it ran after the drain, ended cancelled at the
// stop, or never started. A body that ended by an exception counts as ended. Just after a
// `drained` answer the scenario also asks every handle made so far whether it is finished.
//
// The deadline: drain(deadline) answers `timed_out` once the deadline passed with work left, so
// it never returns after its deadline, and never answers `timed_out` before it. Virtual time
// jumps to the deadline exactly, and a drainer woken then is ready, so virtual time cannot move
// again before it returns: "after" is strict.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/time.hpp>

namespace weft::sim::oracles {

class drain_ledger {
 public:
  explicit drain_ledger(context& sim) : sim_(sim) {}

  // The body of submission `id` (a task, or a blocking callback) ended: it returned, threw, or
  // its frame was destroyed.
  void body_ended(std::uint64_t id) { finished_.insert(id); }

  // drain() just returned `drained`: every body that will ever finish for an admitted
  // submission has finished by now.
  void drained() {
    drained_ = true;
    finished_at_drain_ = finished_;
  }

  // Just after a `drained` answer, the handle of admitted submission `id` was not finished: its
  // completion was not yet published although drain() had stopped waiting for it.
  void unfinished_handle(std::uint64_t id) {
    if (++violations_ <= reported_max) {
      sim_.fail("drain oracle: drain() returned drained while the handle of admitted submission " + std::to_string(id) +
                " was not finished");
    }
  }

  // drain(deadline) was called at `began` and returned `answer` at `now`.
  void returned(drain_outcome answer, instant began, std::optional<duration> deadline, instant now) {
    if (!deadline) return;
    const instant due = began + *deadline;
    if (now > due) {
      sim_.fail(std::string("drain oracle: drain(deadline) returned ") + to_string(answer) + " " +
                std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now - due).count()) +
                " us after its deadline");
    } else if (answer == drain_outcome::timed_out && now < due) {
      sim_.fail("drain oracle: drain(deadline) answered timed_out " +
                std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(due - now).count()) +
                " us before its deadline");
    }
  }

  // After the runtime stopped: how submission `id` ended ("ok", "cancelled", "panicked",
  // "rejected" or "stranded").
  void ended(std::uint64_t id, const std::string& outcome) {
    if (!drained_ || outcome == "rejected") return;
    ++checked_;
    if (finished_at_drain_.count(id) != 0) return;
    const bool later = finished_.count(id) != 0;
    if (++violations_ <= reported_max) {
      sim_.fail("drain oracle: submission " + std::to_string(id) + " was admitted (it ended '" + outcome +
                "') but its body had not finished when drain() returned drained" +
                (later ? " (it ended afterwards)" : " (it never ended)"));
    }
  }

  // Call at the end, after every submission ended. Returns true when nothing was violated.
  bool check() {
    if (violations_ > reported_max) {
      sim_.fail("drain oracle: " + std::to_string(violations_ - reported_max) + " more violations");
    }
    return violations_ == 0;
  }

  bool was_drained() const noexcept { return drained_; }
  std::uint64_t checked() const noexcept { return checked_; }

 private:
  static constexpr std::uint64_t reported_max = 5;

  context& sim_;
  std::set<std::uint64_t> finished_;
  std::set<std::uint64_t> finished_at_drain_;
  bool drained_ = false;
  std::uint64_t checked_ = 0;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
