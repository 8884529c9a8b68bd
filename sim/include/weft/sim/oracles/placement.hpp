// weft/sim/oracles/placement.hpp — oracle: work lands where it was placed, relocated once there.
//
// The promises (docs/runtime.md, "Placing work" and "Thread-aware inputs"):
//   * spawn_everywhere gives one task per worker, a handle each, in worker order: the call
//     returns one handle per worker, and handle i's task runs on worker i, once;
//   * worker_scheduler(i).spawn runs its task on worker i;
//   * spawn_anywhere(input, f) and spawn_everywhere(input, f) relocate the input on the
//     destination, before f runs, exactly once, with from = the submitting worker
//     (external_worker outside the runtime) and to = the destination.
// A refused placement never runs (its factory is destroyed uncalled), so it is never relocated:
// relocations are counted per (submission, destination) and must match the factories that ran
// there, one for one. Outcomes (run or refused, never both; nothing stranded) are the task
// ledger's (tasks.hpp); this ledger judges only where and how the factories ran.
//
// A checker only (see submissions.hpp for why its state is plain data). Violations are reported
// as they happen, or by check() at the end for relocations without a factory.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <weft/sim/context.hpp>
#include <weft/thread_aware.hpp>

namespace weft::sim::oracles {

class placement_ledger {
 public:
  // What one copy of a thread-aware input saw of its relocations (it travels inside the input).
  struct relocation_log {
    std::uint32_t count = 0;
    std::uint64_t thread = 0;  // of the last relocation
    worker_id from;
    worker_id to;
  };

  placement_ledger(context& sim, std::size_t workers) : sim_(sim), workers_(workers) {}

  // A spawn_everywhere call returned `handles` handles.
  void everywhere_returned(std::uint64_t submission, std::size_t handles) {
    if (handles != workers_) {
      fail("spawn_everywhere (submission " + std::to_string(submission) + ") returned " + std::to_string(handles) +
           " handles for " + std::to_string(workers_) + " workers (one task per worker)");
    }
  }

  // The factory of task `id` runs on worker `worker`; `placed_on` is the worker it was placed on
  // (handle i of spawn_everywhere, or worker_scheduler(i)), nullopt when the runtime picked.
  void factory_ran(std::uint64_t id, std::optional<std::size_t> placed_on, std::size_t worker) {
    const std::uint64_t runs = ++factories_[id];
    if (runs > 1) fail("task " + std::to_string(id) + "'s factory ran " + std::to_string(runs) + " times");
    if (placed_on && *placed_on != worker) {
      fail("task " + std::to_string(id) + " was placed on worker " + std::to_string(*placed_on) + " but ran on worker " +
           std::to_string(worker));
    }
  }

  // The handle of task `id` delivered the value task `value` returned (every task returns its
  // own id): a handle answers for its own task, so spawn_everywhere's handle i for worker i's.
  void delivered(std::uint64_t id, std::uint64_t value) {
    if (value != id) {
      fail("the handle of task " + std::to_string(id) + " delivered task " + std::to_string(value) + "'s result");
    }
  }
  // Submission `id` was refused `reason` before any stop was requested (and, for `full`, with no
  // inbox_full fault injected): nothing could refuse it.
  void refused_without_cause(std::uint64_t id, const std::string& reason) {
    fail("task " + std::to_string(id) + " was refused (" + reason + ") though no stop was requested");
  }

  // A copy of submission `submission`'s input is relocated to `to`.
  void relocated(std::uint64_t submission, worker_id to) { ++relocations_[{submission, to.index}]; }

  // The factory of a thread-aware placement of `submission` runs on worker `worker`, thread
  // `thread`, with its input's own record; `from` is the worker that submitted it
  // (external_worker for a thread outside the runtime).
  void input_arrived(std::uint64_t submission, const relocation_log& log, worker_id from, std::size_t worker,
                     std::uint64_t thread) {
    ++arrivals_[{submission, worker}];
    const std::string what = "submission " + std::to_string(submission) + "'s input on worker " + std::to_string(worker);
    if (log.count != 1) {
      fail(what + " was relocated " + std::to_string(log.count) + " times before its factory (exactly once)");
      return;
    }
    if (log.thread != thread) {
      fail(what + " was relocated on thread " + std::to_string(log.thread) + ", not on its destination's thread " +
           std::to_string(thread));
    }
    if (log.to != worker_id{worker}) fail(what + " was relocated to " + name(log.to));
    if (log.from != from) fail(what + " was relocated from " + name(log.from) + ", but it came from " + name(from));
  }

  // Call at the end, after every handle was settled: every relocation belongs to a factory that
  // ran on its destination.
  bool check() {
    for (const auto& [key, n] : relocations_) {
      const auto arrived = arrivals_.find(key);
      const std::uint64_t ran = arrived == arrivals_.end() ? 0 : arrived->second;
      if (n != ran) {
        fail("submission " + std::to_string(key.first) + "'s input was relocated to worker " + std::to_string(key.second) +
             " " + std::to_string(n) + " times, and its factory ran there " + std::to_string(ran) +
             " times (a placement that never ran is never relocated)");
      }
    }
    if (violations_ > reported_max) {
      sim_.fail("placement oracle: " + std::to_string(violations_ - reported_max) + " more violations");
    }
    return violations_ == 0;
  }

 private:
  static constexpr std::uint64_t reported_max = 5;

  static std::string name(worker_id w) {
    return w.is_external() ? "external_worker" : "worker " + std::to_string(w.index);
  }
  void fail(const std::string& what) {
    if (++violations_ <= reported_max) sim_.fail("placement oracle: " + what);
  }

  context& sim_;
  const std::size_t workers_;
  std::map<std::uint64_t, std::uint64_t> factories_;  // by task id
  // by (submission, destination worker index); ordered: reports come out in submission order
  std::map<std::pair<std::uint64_t, std::size_t>, std::uint64_t> relocations_;
  std::map<std::pair<std::uint64_t, std::size_t>, std::uint64_t> arrivals_;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
