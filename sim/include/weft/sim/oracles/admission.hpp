// weft/sim/oracles/admission.hpp — oracle: once a submitter can know admission is closed, its
// submissions are refused `closed`.
//
// docs/shutdown.md promises that admission closes before anything else a stop or a drain does:
//   * request_stop() clears admission before it sets the stop flag, so a submission made after
//     its submitter saw stop_requested() == true is refused `closed`;
//   * request_stop() never returns before admission is closed (a second, concurrent request
//     included), so a submission made after any request_stop() call returned is refused `closed`;
//   * drain() closes admission first, so a submission made after drain() returned is refused.
// The scenario tells the ledger, just before each submission, what its submitter had seen (the
// evidence), and after the runtime stopped, how the submission ended. Anything but `rejected`
// with `queue_error::closed` for a submission made with evidence is a violation.
//
// The evidence is read by the submitting thread before it calls into the runtime, and the events
// it reports (a stop_requested() answer, a return from request_stop() or drain()) happened before
// that read: in the simulator every thread is a fiber on one OS thread, so "before" is the order
// of the run. A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <weft/queue_error.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class admission_ledger {
 public:
  explicit admission_ledger(context& sim) : sim_(sim) {}

  // What a thread may have learned before a submission; `none` when it learned nothing.
  enum class evidence { none, saw_stop_requested, stop_request_returned, drain_returned };

  // The events that make later submissions evidence-bearing, as the threads see them return.
  void stop_request_returned() noexcept { stop_returned_ = true; }
  void drain_returned() noexcept { drain_returned_ = true; }

  // What a submitter knows just before it submits, given its own stop_requested() answer.
  evidence before_submission(bool stop_requested_seen) const noexcept {
    if (stop_requested_seen) return evidence::saw_stop_requested;
    if (stop_returned_) return evidence::stop_request_returned;
    if (drain_returned_) return evidence::drain_returned;
    return evidence::none;
  }

  // Submission `id` is about to be made with `seen`.
  void submitting(std::uint64_t id, evidence seen) {
    if (seen != evidence::none) evidence_.emplace(id, seen);
  }

  // How submission `id` ended: `outcome` is "ok", "cancelled", "panicked" or "rejected" (with
  // `reason`), or "stranded" (unfinished after the stop).
  void ended(std::uint64_t id, const std::string& outcome, queue_error reason) {
    const auto it = evidence_.find(id);
    if (it == evidence_.end()) return;
    ++checked_;
    if (outcome == "rejected" && reason == queue_error::closed) return;
    const std::string ending = outcome == "rejected" ? "rejected '" + std::string(to_string(reason)) + "'" : "'" + outcome + "'";
    if (++violations_ <= reported_max) {
      sim_.fail("admission oracle: submission " + std::to_string(id) + " was made after its submitter " +
                describe(it->second) + ", yet ended " + ending + " instead of rejected 'closed'");
    }
  }

  // Call at the end, after every submission ended. Returns true when nothing was violated.
  bool check() {
    if (violations_ > reported_max) {
      sim_.fail("admission oracle: " + std::to_string(violations_ - reported_max) + " more violations");
    }
    return violations_ == 0;
  }

  // Submissions made with evidence and judged (for the scenario's notes).
  std::uint64_t checked() const noexcept { return checked_; }

 private:
  static constexpr std::uint64_t reported_max = 5;

  static const char* describe(evidence seen) noexcept {
    switch (seen) {
      case evidence::saw_stop_requested: return "saw stop_requested() == true";
      case evidence::stop_request_returned: return "knew a request_stop() had returned";
      case evidence::drain_returned: return "knew drain() had returned";
      case evidence::none: break;
    }
    return "knew nothing";
  }

  context& sim_;
  std::map<std::uint64_t, evidence> evidence_;  // ordered: reports come out in id order
  bool stop_returned_ = false;
  bool drain_returned_ = false;
  std::uint64_t checked_ = 0;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
