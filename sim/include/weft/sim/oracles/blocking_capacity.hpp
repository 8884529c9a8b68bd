// weft/sim/oracles/blocking_capacity.hpp — oracle: a blocking pool never exceeds its capacity.
//
// The promise (docs/runtime.md, "Blocking work"): each pool has at most `max_threads` threads,
// started on demand and kept until shutdown, and at most `max_queued` callbacks waiting for a
// thread; a call beyond that is refused with `full`. What a scenario can see of it, per pool:
//   * running: callbacks between their entry and their exit (each counts itself in and out) never
//     exceed max_threads, checked at every entry;
//   * threads: the distinct threads that ever ran a callback never exceed max_threads (threads
//     are kept, never replaced), checked at every entry;
//   * in flight: admitted callbacks that have not exited never exceed max_threads + max_queued,
//     checked at every admission and every entry. Each one is either queued or held by a thread,
//     and the queue holds at most max_queued beyond the threads free to take a job, so queued +
//     running <= max_queued + threads <= max_queued + max_threads.
// Every count is a lower bound of the pool's own (a callback counts itself in after its job left
// the queue, out before its thread is free again; a call counts as admitted only once
// spawn_blocking returned it or its callback started), so a correct pool never trips it.
// The in-flight count holds only while nothing leaves the queue unrun: once a stop is under way,
// queued jobs are discarded (or abandoned by their cancelled awaiting task) without a trace the
// scenario sees, so the scenario calls stopping() before it requests a stop, and the in-flight
// check ends there. The thread checks hold to the end.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <weft/platform/assert.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class blocking_capacity {
 public:
  blocking_capacity(context& sim, std::size_t pools, std::size_t max_threads, std::size_t max_queued)
      : sim_(sim), max_threads_(max_threads), max_queued_(max_queued), pools_(pools) {}

  // spawn_blocking returned call `id` of pool `pool` unfinished: the pool admitted it.
  void admitted(std::size_t pool, std::uint64_t id) {
    if (calls_[id] != phase::unseen) return;  // its callback already started (or even ended)
    count_in(pool, id, "an admission");
  }
  // The callback of call `id` starts on `thread` (a pool thread of `pool`).
  void entered(std::size_t pool, std::uint64_t id, std::uint64_t thread) {
    state& p = pools_.at(pool);
    if (calls_[id] == phase::unseen) count_in(pool, id, "a callback start");
    ++p.running;
    p.threads.insert(thread);
    if (p.running > max_threads_) {
      fail(pool, "runs " + std::to_string(p.running) + " callbacks at once; max_threads is " +
                     std::to_string(max_threads_));
    }
    if (p.threads.size() > max_threads_) {
      fail(pool, "ran callbacks on " + std::to_string(p.threads.size()) + " distinct threads; max_threads is " +
                     std::to_string(max_threads_) + " (threads are kept until shutdown)");
    }
  }
  // The callback of call `id` returns.
  void exited(std::size_t pool, std::uint64_t id) {
    state& p = pools_.at(pool);
    WEFT_ASSERT(calls_[id] == phase::in_flight && p.running > 0 && p.in_flight > 0);
    calls_[id] = phase::done;
    --p.running;
    --p.in_flight;
  }
  // A stop is about to be requested: queued jobs may leave unrun from now on.
  void stopping() noexcept { stopping_ = true; }

 private:
  enum class phase { unseen, in_flight, done };
  struct state {
    std::size_t running = 0;
    std::size_t in_flight = 0;
    std::set<std::uint64_t> threads;
  };
  static constexpr std::uint64_t reported_max = 5;

  void count_in(std::size_t pool, std::uint64_t id, const char* at) {
    state& p = pools_.at(pool);
    calls_[id] = phase::in_flight;
    ++p.in_flight;
    if (!stopping_ && p.in_flight > max_threads_ + max_queued_) {
      fail(pool, "holds " + std::to_string(p.in_flight) + " admitted callbacks not yet finished at " + at +
                     "; at most max_threads + max_queued = " + std::to_string(max_threads_ + max_queued_) +
                     " can be running or queued");
    }
  }
  void fail(std::size_t pool, const std::string& what) {
    if (++violations_ <= reported_max) sim_.fail("blocking capacity oracle: pool " + std::to_string(pool) + " " + what);
  }

  context& sim_;
  const std::size_t max_threads_;
  const std::size_t max_queued_;
  std::vector<state> pools_;
  std::map<std::uint64_t, phase> calls_;
  bool stopping_ = false;
  std::uint64_t violations_ = 0;
};

}  // namespace weft::sim::oracles
