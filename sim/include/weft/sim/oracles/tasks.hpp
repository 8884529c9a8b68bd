// weft/sim/oracles/tasks.hpp — oracles over tasks submitted to a runtime (or a local_domain).
//
// The scenario reports what it sees; the ledger judges:
//   * every admitted task reaches exactly one terminal outcome (ok, panicked, cancelled);
//   * nothing rejected ever runs (a refused factory is never called);
//   * nothing cancelled ran to completion, nothing `ok` failed to;
//   * no accepted submission is stranded: after the runtime stopped, every admitted handle is
//     finished (the scenario reports stranded() for those that are not);
//   * no poll after completion: once a task's body finished, its probes are never polled again;
//   * tasks never change worker: every resume happens on the thread the task first ran on
//     (platform::current_thread_id(), a fiber id in the simulator) — unless the scenario allows
//     moves (allow_moves: a stealing_pool's tasks may run each poll on another worker).
// A checker only (see submissions.hpp for why its state is plain data). Violations are reported
// as they happen (worker changes, polls after completion) or by check() at the end.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/join_error.hpp>
#include <weft/queue_error.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class task_ledger {
 public:
  // In an awaiting task's frame: if the task is destroyed (cancelled) before it read the outcome
  // of submission `id`, the handle was dropped unread, and the ledger is told so.
  struct awaiting {
    task_ledger* ledger;
    std::uint64_t id;
    bool settled = false;
    ~awaiting() {
      if (!settled) ledger->detached(id);
    }
  };

  explicit task_ledger(context& sim) : sim_(sim) {}

  // A join outcome in the ledger's words: "ok", or to_string(join_error::kind), and the
  // rejection reason.
  struct expected_kind {
    std::string text;
    queue_error reason = queue_error::closed;
  };
  template <class E>
  static expected_kind kind_of(const E& result) {
    if (result) return {"ok", queue_error::closed};
    return {to_string(result.error().get_kind()), result.error().rejection_reason()};
  }

  // The submission call returned: `admitted` unless the handle came back rejected at once.
  void answered(std::uint64_t id, bool admitted) {
    auto& e = entries_[id];
    ++e.answers;
    e.admitted = admitted;
  }
  // The submission is a blocking callback (spawn_blocking): a stop may cancel its awaiting task
  // after the callback ran to the end, so `cancelled` does not imply "did not finish".
  void mark_blocking(std::uint64_t id) { entries_[id].blocking = true; }
  // The handle was dropped unread (its awaiting parent was cancelled): no outcome to check.
  void detached(std::uint64_t id) { ++entries_[id].detached; }
  // The task's body (or blocking callback) started on `thread`.
  void started(std::uint64_t id, std::uint64_t thread) {
    auto& e = entries_[id];
    ++e.starts;
    e.thread = thread;
    if (e.finished > 0) fail(id, "started again after it finished");
  }
  // The body resumed after an await, on `thread`.
  void resumed(std::uint64_t id, std::uint64_t thread) {
    auto& e = entries_[id];
    if (e.finished > 0) fail(id, "resumed after it finished (a poll after completion)");
    if (!moves_allowed_ && e.starts > 0 && thread != e.thread) {
      fail(id, "changed worker: started on thread " + std::to_string(e.thread) + ", resumed on thread " +
                   std::to_string(thread));
    }
  }
  // A probe leaf of the task was polled.
  void polled(std::uint64_t id) {
    if (entries_[id].finished > 0) fail(id, "was polled after it completed");
  }
  // The body reached its end (it returns its value next).
  void finished(std::uint64_t id) { ++entries_[id].finished; }
  // The join handle delivered its outcome.
  void outcome(std::uint64_t id, const expected_kind& kind) { record_outcome(id, kind.text, kind.reason); }
  // After the runtime stopped: the handle of this admitted task is not finished.
  void stranded(std::uint64_t id) { fail(id, "was admitted but is still unfinished after the runtime stopped (stranded)"); }

  // After the runtime stopped: records what the handle of task `id` says (an unfinished handle is
  // a stranded admitted task; it is detached) and returns it ("stranded" for an unfinished one).
  // Every scenario settles its handles this way.
  template <class Handle>
  expected_kind settle(std::uint64_t id, Handle& h) {
    if (!h.is_finished()) {
      answered(id, true);
      stranded(id);
      h.detach();
      return {"stranded", queue_error::closed};
    }
    auto kind = kind_of(h.join());
    answered(id, kind.text != "rejected");
    outcome(id, kind);
    return kind;
  }

  // Panicked outcomes are legitimate only when the scenario allows them (injected exceptions).
  void allow_panics(bool allowed) noexcept { panics_allowed_ = allowed; }
  // Tasks of a stealing_pool may resume on another worker than they started on.
  void allow_moves(bool allowed) noexcept { moves_allowed_ = allowed; }

  // Call at the end, after every handle was joined. Returns true when nothing was violated.
  bool check() {
    for (const auto& [id, e] : entries_) {
      if (e.detached > 0 && e.outcomes == 0) {
        continue;  // dropped unread by a cancelled parent: nothing was delivered to check
      } else if (e.answers != 1) {
        fail(id, "was answered " + std::to_string(e.answers) + " times");
      } else if (e.outcomes == 0) {
        if (e.admitted && e.detached == 0) fail(id, "never reached a terminal outcome");
      } else if (e.outcomes > 1) {
        fail(id, "reached " + std::to_string(e.outcomes) + " terminal outcomes");
      } else if (e.outcome == "rejected") {
        if (e.admitted) fail(id, "was admitted but its handle says rejected");
        if (e.starts > 0) fail(id, "was rejected but its body ran");
      } else if (!e.admitted) {
        fail(id, "was refused at submission but ended '" + e.outcome + "'");
      } else if (e.outcome == "ok") {
        if (e.starts != 1 || e.finished != 1) {
          fail(id, "ended ok but started " + std::to_string(e.starts) + "x and finished " + std::to_string(e.finished) + "x");
        }
      } else if (e.outcome == "cancelled") {
        if (e.finished > 0 && !e.blocking) fail(id, "ended cancelled but its body ran to the end");
      } else if (e.outcome == "panicked") {
        if (!panics_allowed_) fail(id, "panicked, and nothing in this run throws");
      } else {
        fail(id, "ended with an unknown outcome '" + e.outcome + "'");
      }
    }
    if (violations_ > reported_max) {
      sim_.fail("task oracle: " + std::to_string(violations_ - reported_max) + " more violations");
    }
    return violations_ == 0;
  }

  std::uint64_t count(const std::string& outcome) const {
    std::uint64_t n = 0;
    for (const auto& [id, e] : entries_) n += e.outcome == outcome ? 1 : 0;
    return n;
  }

 private:
  static constexpr std::uint64_t reported_max = 5;
  struct entry {
    std::uint32_t answers = 0;
    bool admitted = false;
    std::uint32_t starts = 0;
    std::uint32_t finished = 0;
    std::uint32_t detached = 0;
    bool blocking = false;
    std::uint32_t outcomes = 0;
    std::string outcome;
    queue_error reason = queue_error::closed;
    std::uint64_t thread = 0;
  };
  void record_outcome(std::uint64_t id, const std::string& text, queue_error reason) {
    auto& e = entries_[id];
    ++e.outcomes;
    e.outcome = text;
    e.reason = reason;
  }
  void fail(std::uint64_t id, const std::string& what) {
    if (++violations_ <= reported_max) sim_.fail("task oracle: task " + std::to_string(id) + " " + what);
  }

  context& sim_;
  std::map<std::uint64_t, entry> entries_;  // ordered: reports come out in id order
  std::uint64_t violations_ = 0;
  bool panics_allowed_ = false;
  bool moves_allowed_ = false;
};

}  // namespace weft::sim::oracles
