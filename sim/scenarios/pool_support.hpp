// pool_support.hpp — what the stealing_pool scenarios share: starting a pool under the fault plan,
// a broadcast gate, and a pool task that reports its polls to the task oracle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/stealing_pool.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

namespace weft::sim::scenarios {

// Builds the pool; false (noted) when the fault plan refused a worker thread.
inline bool start_pool(context& sim, const stealing_pool::builder& builder, std::optional<stealing_pool>& pool,
                       const std::string& scenario) {
  try {
    pool.emplace(builder.build());
  } catch (const start_error& e) {
    sim.note(scenario + ": pool did not start: " + e.what());
    return false;
  }
  return true;
}

// A gate any number of tasks wait on; open() wakes them all (from any thread).
class broadcast_gate {
 public:
  struct leaf {
    broadcast_gate* gate;
    bool poll_ready(const waker& w) {
      sync::lock_guard<sync::mutex> hold(gate->lock_);
      if (gate->open_) return true;
      gate->waiters_.push_back(w);
      return false;
    }
    void await_resume() const noexcept {}
  };
  leaf wait() noexcept { return leaf{this}; }

  void open() {
    std::vector<waker> waiters;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      open_ = true;
      waiters.swap(waiters_);
    }
    for (waker& w : waiters) std::move(w).wake();
  }

 private:
  sync::mutex lock_;
  bool open_ = false;
  std::vector<waker> waiters_;
};

inline std::uint64_t this_thread() noexcept { return platform::current_thread_id(); }

}  // namespace weft::sim::scenarios
