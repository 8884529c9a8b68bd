// weft/sim/harness.hpp — helpers for a scenario's own orchestration code (not the system under
// test), so that faults the simulator injects into tasks land on the tasks a scenario checks and
// not on its bookkeeping.
//
//   settle_join(h)    awaits a join handle from the scenario's orchestrating task; when the
//                     simulator injects a task_exception at that await (any leaf await may throw
//                     one), the handle's outcome is still there, so the await is simply retried.
//   join_on_exit      joins the scenario's simulated threads however the scope is left, so an
//                     exception out of block_on never drops a joinable thread.
#pragma once

#include <weft/compiler_support.hpp>

#include <vector>

#include <weft/expected.hpp>
#include <weft/join_error.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/task.hpp>

namespace weft::sim {

template <class T>
task<expected<T, join_error>> settle_join(join_handle<T>& handle) {
  for (;;) {
    try {
      expected<T, join_error> outcome = co_await handle;
      co_return outcome;
    } catch (const injected_fault&) {
      // The injected exception hit the await, not the task: read the outcome again.
    }
  }
}

class join_on_exit {
 public:
  explicit join_on_exit(std::vector<platform::thread>& threads) noexcept : threads_(threads) {}
  join_on_exit(const join_on_exit&) = delete;
  join_on_exit& operator=(const join_on_exit&) = delete;
  ~join_on_exit() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  std::vector<platform::thread>& threads_;
};

}  // namespace weft::sim
