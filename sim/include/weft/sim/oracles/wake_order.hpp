// weft/sim/oracles/wake_order.hpp — oracle: a task woken from another thread is polled at the
// next microtask checkpoint, ahead of macrotasks queued before the wake (event-loop.md, "The
// turn"; decisions.md, "Remote task wakes become microtasks when the inbox is drained").
//
// What is measured. The owner counts the macrotasks it starts (`macrotask_started`, called first
// thing in every macrotask the scenario queues). A remote thread calls `woken(task, gen)` right
// after its wake() returned: the count it records, c, is at least the count at the moment the
// wake was pushed into the loop's inbox (push point P). The task calls `resumed(task, gen)` when
// it continues past the awaited leaf; the count then is q.
//
// The bound, q - c <= 1. Let P fall in turn k of the owner:
//   * P before turn k's drain (step 2): the drain takes the wake, the checkpoint (step 3) polls
//     the task; no macrotask starts between P and the poll.
//   * P after turn k's drain but before its macrotask (step 4) starts: that one macrotask starts,
//     then turn k+1 drains and polls the task in its checkpoint, before its own macrotask.
//   * P while turn k's macrotask runs: that macrotask started before P; turn k+1 polls the task.
// So at most one macrotask starts in (P, poll], and c >= count(P) gives q - c <= 1. The poll
// that resumes the task is the first one after the flag was set (before P), so it is at or
// before the one the wake caused; a wake that coalesced (the task already scheduled, or running
// and so `notified`) gets an even earlier poll. If the task resumed before the waker recorded c
// (the waker was preempted between P and `woken`), q <= c and there is nothing to check. If
// remote wakes were queued as macrotasks instead, the poll would wait behind every macrotask
// queued before it; the scenario keeps two or more queued most of the time.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

// Macrotasks that may start between a remote wake's push and the poll it causes: the one of the
// current turn (see the bound above).
inline constexpr std::uint64_t remote_wake_macrotasks_max = 1;

class wake_order_ledger {
 public:
  explicit wake_order_ledger(context& sim) : sim_(sim) {}

  // Owner thread, first thing in every counted macrotask.
  void macrotask_started() noexcept { ++macrotasks_; }
  std::uint64_t macrotasks() const noexcept { return macrotasks_; }

  // Waker thread, right after wake() returned for generation `gen` of `task`.
  void woken(std::uint64_t task, std::uint64_t gen) {
    auto& e = entries_[task];
    if (e.resumed_gen >= gen) return;  // already resumed: q <= c, nothing to check
    e.woken_gen = gen;
    e.count_at_wake = macrotasks_;
  }

  // Owner thread, when `task` continues past its leaf for generation `gen`.
  void resumed(std::uint64_t task, std::uint64_t gen) {
    auto& e = entries_[task];
    e.resumed_gen = gen;
    ++resumes_;
    if (e.woken_gen != gen) return;  // the waker has not returned from wake() yet
    ++checked_;
    const std::uint64_t since = macrotasks_ - e.count_at_wake;
    if (since > remote_wake_macrotasks_max) {
      sim_.fail("wake order oracle: task " + std::to_string(task) + " woken from another thread (wake " +
                std::to_string(gen) + ") was polled after " + std::to_string(since) +
                " macrotasks had started since the wake returned (at most " +
                std::to_string(remote_wake_macrotasks_max) + ": it must run at the next checkpoint)");
    }
  }

  std::uint64_t resumes() const noexcept { return resumes_; }
  std::uint64_t checked() const noexcept { return checked_; }

 private:
  struct entry {
    std::uint64_t woken_gen = 0;
    std::uint64_t resumed_gen = 0;
    std::uint64_t count_at_wake = 0;
  };
  context& sim_;
  std::uint64_t macrotasks_ = 0;
  std::uint64_t resumes_ = 0;
  std::uint64_t checked_ = 0;
  std::map<std::uint64_t, entry> entries_;
};

}  // namespace weft::sim::oracles
