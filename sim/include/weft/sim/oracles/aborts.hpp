// weft/sim/oracles/aborts.hpp — oracle: an abort destroys the task's frame on its owner thread,
// and the body does not run on after the abort took hold (tasks-and-wakes.md, "Abort";
// decisions.md, "Cancellation is destruction at the next poll").
//
// What the docs promise, and what is checked:
//   * "the poll destroys the coroutine frame on the owner thread": a guard object living in the
//     frame reports platform::current_thread_id() from its destructor (`frame_destroyed`); it
//     must be the loop's thread, whoever aborted.
//   * "it stops at the suspension point where it was waiting": abort() sets `cancelled` and
//     behaves like a wake; the next poll that *starts* after that destroys the frame instead of
//     resuming it. Only a poll already running when abort() returned (one at most: polls of a task
//     never overlap) may still resume the body. The scenario reports every resumption that a poll
//     made (`resumed_by_poll`: a leaf that had suspended reported ready; a leaf ready at its first
//     look resumes nothing, the body just goes on in the same poll). After abort() returned, at
//     most `aborted_remote_resumptions_max` (1) such resumptions may follow when another thread
//     aborted, and none when the owner thread did (it cannot abort from inside the task's own poll
//     here, so no poll of the task is running then).
// The outcome half of the promise (cancelled unless it completed first, an abort after completion
// changes nothing) is the outcome ledger's (outcomes.hpp), told the expected outcome per task.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

// Resumptions by a poll after a cross-thread abort() returned: the poll that was running then.
inline constexpr std::uint64_t aborted_remote_resumptions_max = 1;

class abort_ledger {
 public:
  abort_ledger(context& sim, std::uint64_t owner_thread) : sim_(sim), owner_thread_(owner_thread) {}

  // The task's body began / reached its end (just before co_return).
  void body_started(std::uint64_t id) { ++entries_[id].starts; }
  void body_finished(std::uint64_t id) { entries_[id].finished = true; }
  bool finished(std::uint64_t id) const {
    auto it = entries_.find(id);
    return it != entries_.end() && it->second.finished;
  }

  // A poll resumed the body past a leaf that had suspended it.
  void resumed_by_poll(std::uint64_t id) {
    auto& e = entries_[id];
    if (e.aborted) ++e.resumptions_after_abort;
  }

  // abort() returned; `from_owner`: it was called on the loop's thread.
  void abort_returned(std::uint64_t id, bool from_owner) {
    auto& e = entries_[id];
    if (e.aborted) return;  // the first abort is the one that takes hold
    e.aborted = true;
    e.aborted_from_owner = from_owner;
  }

  // From the destructor of a guard in the task's frame.
  void frame_destroyed(std::uint64_t id, std::uint64_t thread) {
    auto& e = entries_[id];
    ++e.destructions;
    if (thread != owner_thread_) {
      sim_.fail("abort oracle: task " + std::to_string(id) + "'s frame was destroyed on thread " +
                std::to_string(thread) + ", not on its loop's thread " + std::to_string(owner_thread_));
    }
  }

  // Call when every task is settled and every frame gone.
  bool check() const {
    bool ok = true;
    for (const auto& [id, e] : entries_) {
      const std::uint64_t allowed = e.aborted_from_owner ? 0 : aborted_remote_resumptions_max;
      if (e.aborted && e.resumptions_after_abort > allowed) {
        ok = false;
        sim_.fail("abort oracle: task " + std::to_string(id) + "'s body was resumed by a poll " +
                  std::to_string(e.resumptions_after_abort) + " time(s) after abort() returned on " +
                  (e.aborted_from_owner ? "its loop's thread" : "another thread") + " (at most " +
                  std::to_string(allowed) + ")");
      }
      if (e.starts != e.destructions) {
        ok = false;
        sim_.fail("abort oracle: task " + std::to_string(id) + "'s body started " + std::to_string(e.starts) +
                  " times but its frame was destroyed " + std::to_string(e.destructions) + " times");
      }
    }
    return ok;
  }

 private:
  struct entry {
    std::uint32_t starts = 0;
    std::uint32_t destructions = 0;
    bool finished = false;
    bool aborted = false;
    bool aborted_from_owner = false;
    std::uint64_t resumptions_after_abort = 0;
  };
  context& sim_;
  std::uint64_t owner_thread_;
  std::map<std::uint64_t, entry> entries_;
};

}  // namespace weft::sim::oracles
