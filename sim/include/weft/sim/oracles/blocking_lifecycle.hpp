// weft/sim/oracles/blocking_lifecycle.hpp — oracle: no blocking callback outlives stop(), and an
// aborted call whose handle answered `cancelled` never starts its callback afterwards.
//
// The promises:
//   * docs/shutdown.md, order of a stop, step 4: the pools close, running callbacks finish and the
//     pool threads are joined before stop() returns. What a scenario sees: when stop() returns,
//     no callback is between its entry and its exit, and no callback enters or exits later.
//   * scheduler.hpp spawn_blocking (docs/runtime.md, "Blocking work"): aborting the handle
//     before fn started means fn never runs. abort() only requests the cancellation (the awaiting
//     task's frame goes away at its next poll, on its worker), so a callback may still start
//     between abort() and that poll; the rule checked is the later one: once the aborted handle
//     answered `cancelled`, the awaiting task is gone and the job abandoned, so a callback that
//     had not started by then never starts. "Started" is the pool's begin(), which comes a few
//     steps before the callback's own entry record; a callback not yet seen may have begun
//     already. The check is made only when that cannot be: when the pool's every thread
//     (max_threads, which blocking_capacity.hpp holds it to) is inside another recorded callback
//     at the answer, no thread is between begin() and entry.
// Every record is made by the party it describes (the callback counts itself in and out, the
// joiner records the answer after join() returned), so each is a lower bound of what happened
// and a correct runtime never trips a check.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class blocking_lifecycle {
 public:
  blocking_lifecycle(context& sim, std::size_t pools, std::size_t max_threads)
      : sim_(sim), max_threads_(max_threads), pool_running_(pools, 0) {}

  // The callback of call `id` (a call to pool `pool`) starts.
  void entered(std::size_t pool, std::uint64_t id) {
    started_.insert(id);
    ++running_;
    ++pool_running_.at(pool);
    if (stop_returned_) fail("callback " + std::to_string(id) + " started after stop() returned");
    if (abandoned_.contains(id)) {
      fail("callback " + std::to_string(id) +
           " started after its aborted handle answered cancelled (aborted before it started: it must never run)");
    }
  }
  // The callback of call `id` returns.
  void exited(std::size_t pool, std::uint64_t id) {
    --running_;
    --pool_running_.at(pool);
    if (stop_returned_) fail("callback " + std::to_string(id) + " was still running after stop() returned");
  }
  // Call `id` to pool `pool` was aborted and its handle then answered `cancelled`.
  void aborted_answered_cancelled(std::size_t pool, std::uint64_t id) {
    if (!started_.contains(id) && pool_running_.at(pool) >= max_threads_) abandoned_.insert(id);
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
  const std::size_t max_threads_;
  std::vector<std::size_t> pool_running_;
  std::set<std::uint64_t> started_;
  std::set<std::uint64_t> abandoned_;
  std::uint64_t running_ = 0;
  bool stop_returned_ = false;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
