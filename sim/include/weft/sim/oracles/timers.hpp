// weft/sim/oracles/timers.hpp — oracles: no timer fires before its deadline (virtual time), and
// every armed timer fires (or is cancelled) exactly once (timer_ledger); one loop's timers fire
// in (deadline, arming order) and none late (timer_order); a task whose timeout elapsed never
// runs on past the await it was suspended at, and its frame is destroyed (timeout_ledger).
//
// Checkers only (see submissions.hpp for why their state is plain data). Violations are reported
// at once, with the timer's id.
#pragma once

#include <weft/compiler_support.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <weft/platform/clock.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class timer_ledger {
 public:
  explicit timer_ledger(context& sim) : sim_(sim) {}

  void armed(std::uint64_t id, instant deadline) {
    auto& e = entries_[id];
    ++e.armed;
    e.deadline = deadline;
  }
  void fired(std::uint64_t id, instant now) {
    auto& e = entries_[id];
    ++e.fired;
    if (e.armed == 0) {
      sim_.fail("timer oracle: timer " + std::to_string(id) + " fired but was never armed");
    } else if (now < e.deadline) {
      const auto early = std::chrono::duration_cast<std::chrono::nanoseconds>(e.deadline - now).count();
      sim_.fail("timer oracle: timer " + std::to_string(id) + " fired " + std::to_string(early) +
                " ns before its deadline (virtual time)");
    }
  }
  void cancelled(std::uint64_t id) { ++entries_[id].cancelled; }
  // A task that ended early (an injected panic at one of its awaits) dropped whatever timers it
  // had armed and not yet seen settle: count those among ids [first, first + count) as cancelled.
  void cancel_unsettled(std::uint64_t first, std::uint64_t count) {
    for (auto it = entries_.lower_bound(first); it != entries_.end() && it->first < first + count; ++it) {
      entry& e = it->second;
      if (e.fired + e.cancelled < e.armed) e.cancelled = e.armed - e.fired;
    }
  }

  std::uint64_t count_fired() const {
    std::uint64_t n = 0;
    for (const auto& [id, e] : entries_) n += e.fired;
    return n;
  }

  // Call when the loop is drained: every armed timer settled exactly once.
  bool check() const {
    std::uint64_t violations = 0;
    for (const auto& [id, e] : entries_) {
      if (e.fired + e.cancelled == e.armed) continue;
      if (++violations <= 5) {
        sim_.fail("timer oracle: timer " + std::to_string(id) + " armed " + std::to_string(e.armed) + "x, fired " +
                  std::to_string(e.fired) + "x, cancelled " + std::to_string(e.cancelled) + "x");
      }
    }
    return violations == 0;
  }

 private:
  struct entry {
    std::uint32_t armed = 0;
    std::uint32_t fired = 0;
    std::uint32_t cancelled = 0;
    instant deadline{};
  };
  context& sim_;
  std::map<std::uint64_t, entry> entries_;
};

// The timers of one loop, all armed on its thread, in a program where nothing but that loop waits
// with a deadline (the engine's other fibers only yield or take locks). Two promises, checked at
// each observed firing (event-loop.md, *The turn*; timer_heap.hpp):
//   * order: expiry moves timers to the macrotask queue in (deadline, arming) order, and a sleeper
//     resumes at the checkpoint right after its timer's macrotask, before the next macrotask
//     starts; so the firings observed (a set_timeout callback running, a sleeper resuming) come in
//     strictly increasing (deadline, arming) order. Timers armed after one fired cannot break
//     this: delays are never negative, so such a timer's deadline is at least the fired one's,
//     and a tie is armed later.
//   * lateness: virtual time moves only when every fiber is blocked, and then jumps to the
//     earliest engine deadline; the loop is then parked until its earliest timer's deadline. So
//     virtual time never passes an armed timer's deadline, and each fires (is observed) at
//     exactly its deadline: any lateness means the loop waited for a later timer.
// Feed it in arming order: record each timer just before the call that arms it, in the same
// poll or macrotask, so that no other timer of the loop is armed in between.
class timer_order {
 public:
  explicit timer_order(context& sim) : sim_(sim) {}

  // A loop timer (set_timeout) armed now for `deadline`: it is armed even if already due.
  void armed(std::uint64_t id, instant deadline) { entries_[id] = entry{deadline, next_arming_++}; }
  // A sleep about to be awaited: it arms a timer only if its deadline is still ahead (an elapsed
  // sleep completes in its first poll, without a timer, and is left out).
  void sleep_armed(std::uint64_t id, instant deadline) {
    if (deadline > platform::clock::now()) armed(id, deadline);
  }

  // Timer `id` fired: its callback runs, or its sleeper resumed past the await.
  void fired(std::uint64_t id) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;  // an elapsed sleep: no timer
    const entry e = it->second;
    entries_.erase(it);
    const instant now = platform::clock::now();
    if (now > e.deadline) {
      const auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(now - e.deadline).count();
      sim_.fail("timer order oracle: timer " + std::to_string(id) + " fired " + std::to_string(late) +
                " ns after its deadline (virtual time passed it while it was armed)");
    }
    if (last_ && !(last_->deadline < e.deadline || (last_->deadline == e.deadline && last_->arming < e.arming))) {
      sim_.fail("timer order oracle: timer " + std::to_string(id) + " (deadline " + describe(e) +
                ") fired after timer " + std::to_string(last_id_) + " (deadline " + describe(*last_) + ")");
    }
    last_ = e;
    last_id_ = id;
  }

 private:
  struct entry {
    instant deadline;
    std::uint64_t arming = 0;
  };
  static std::string describe(const entry& e) {
    return std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(e.deadline.time_since_epoch()).count()) +
           " ns, armed #" + std::to_string(e.arming);
  }
  context& sim_;
  std::map<std::uint64_t, entry> entries_;  // armed, not yet fired
  std::uint64_t next_arming_ = 0;
  std::optional<entry> last_;  // the latest firing
  std::uint64_t last_id_ = 0;
};

// timeout(d, task) that elapses aborts the task (time.hpp, timeout_error::elapsed): the task
// stops at the await it was suspended at — its body never runs on past it — and its frame is
// destroyed. The inner task reports passing its await and the destruction of its frame; the
// awaiting task reports the timeout's answer. Ids are the caller's.
class timeout_ledger {
 public:
  explicit timeout_ledger(context& sim) : sim_(sim) {}

  void started(std::uint64_t id) { entries_[id].started = true; }
  // The inner task's body got past its await.
  void resumed(std::uint64_t id) {
    entry& e = entries_[id];
    e.resumed = true;
    if (e.elapsed) fail_resumed(id);
  }
  void destroyed(std::uint64_t id) { entries_[id].destroyed = true; }
  // The awaiting task's answer: elapsed or the inner task's result.
  void answered(std::uint64_t id, bool elapsed) {
    entry& e = entries_[id];
    e.answered = true;
    e.elapsed = elapsed;
    if (elapsed && e.resumed) fail_resumed(id);
    if (!elapsed && !e.resumed) {
      sim_.fail("timeout oracle: task " + std::to_string(id) + "'s timeout answered its result before it finished");
    }
  }
  // When the loop is drained: every timed-out task's frame is gone.
  bool check() const {
    std::uint64_t violations = 0;
    for (const auto& [id, e] : entries_) {
      if (!e.answered || !e.elapsed || e.destroyed || !e.started) continue;
      if (++violations <= 5) {
        sim_.fail("timeout oracle: task " + std::to_string(id) + " timed out but its frame was never destroyed");
      }
    }
    return violations == 0;
  }

 private:
  void fail_resumed(std::uint64_t id) {
    sim_.fail("timeout oracle: task " + std::to_string(id) +
              " ran on past its await after its timeout elapsed (it was not aborted)");
  }
  struct entry {
    bool started = false;
    bool resumed = false;
    bool destroyed = false;
    bool answered = false;
    bool elapsed = false;
  };
  context& sim_;
  std::map<std::uint64_t, entry> entries_;
};

}  // namespace weft::sim::oracles
