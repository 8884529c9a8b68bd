// weft/sim/oracles/blocking_lifecycle.hpp — oracle: no blocking callback outlives stop().
//
// The promise (docs/shutdown.md, the order of a stop, step 4): the pools close, running callbacks
// finish and the pool threads are joined before stop() returns. What a scenario sees: when stop()
// returns, no callback is between its entry and its exit, and no callback enters or exits later.
// Each callback counts itself in after its job left the queue and out before its thread is free
// again, so the count is a lower bound of what runs and a correct runtime never trips a check.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <cstdint>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class blocking_lifecycle {
 public:
  explicit blocking_lifecycle(context& sim) : sim_(sim) {}

  // The callback of call `id` starts.
  void entered(std::uint64_t id) {
    ++running_;
    if (stop_returned_) fail("callback " + std::to_string(id) + " started after stop() returned");
  }
  // The callback of call `id` returns.
  void exited(std::uint64_t id) {
    --running_;
    if (stop_returned_) fail("callback " + std::to_string(id) + " was still running after stop() returned");
  }
  // stop() returned: every pool is joined.
  void stop_returned() {
    stop_returned_ = true;
    if (running_ > 0) fail("stop() returned while " + std::to_string(running_) + " callbacks were still running");
  }

 private:
  static constexpr std::uint64_t reported_max = 5;
  void fail(const std::string& what) {
    if (++violations_ <= reported_max) sim_.fail("blocking lifecycle oracle: " + what);
  }

  context& sim_;
  std::uint64_t running_ = 0;
  bool stop_returned_ = false;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
