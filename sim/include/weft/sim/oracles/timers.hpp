// weft/sim/oracles/timers.hpp — oracle: no timer fires before its deadline (virtual time), and
// every armed timer fires (or is cancelled) exactly once.
//
// A checker only (see submissions.hpp for why its state is plain data). Early firings are
// reported at once, with the timer's id and how early it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
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

}  // namespace weft::sim::oracles
