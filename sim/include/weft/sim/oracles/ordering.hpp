// weft/sim/oracles/ordering.hpp — oracle: microtask/macrotask ordering on one event loop.
//
// The loop's turn (event_loop.hpp) runs every queued microtask before the next macrotask, and
// takes remote macrotasks from its inbox in arrival order. So:
//   * when a macrotask starts, no microtask queued by an earlier macrotask is still pending;
//   * the macrotasks of one producer run in the order it submitted them.
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class loop_order_ledger {
 public:
  explicit loop_order_ledger(context& sim) : sim_(sim) {}

  // Macrotask `id` (submitted by `producer` as its `sequence`-th) starts running.
  void macrotask_started(std::uint64_t id, std::uint64_t producer, std::uint64_t sequence) {
    if (!pending_.empty()) {
      fail("macrotask " + std::to_string(id) + " ran while the microtask queued by macrotask " +
           std::to_string(*pending_.begin()) + " had not run yet");
    }
    auto [it, fresh] = last_sequence_.try_emplace(producer, sequence);
    if (!fresh) {
      if (sequence <= it->second) {
        fail("producer " + std::to_string(producer) + "'s macrotask #" + std::to_string(sequence) +
             " ran after its #" + std::to_string(it->second) + " (out of submission order)");
      }
      it->second = sequence;
    }
  }
  // Macrotask `id` queued a microtask (one at most per macrotask).
  void microtask_queued(std::uint64_t by_macrotask) { pending_.insert(by_macrotask); }
  void microtask_ran(std::uint64_t by_macrotask) { pending_.erase(by_macrotask); }

  bool ok() const noexcept { return violations_ == 0; }

 private:
  void fail(const std::string& what) {
    if (++violations_ <= 5) sim_.fail("ordering oracle: " + what);
  }
  context& sim_;
  std::set<std::uint64_t> pending_;
  std::map<std::uint64_t, std::uint64_t> last_sequence_;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
