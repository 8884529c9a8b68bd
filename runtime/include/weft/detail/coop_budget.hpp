// weft/detail/coop_budget.hpp — how many awaits a task may finish in one poll before it must
// give its worker back.
//
// A task whose every await is ready at once never suspends, and would keep its thread for as long
// as it likes. Where a budget is installed on the thread (a stealing_pool worker installs one per
// poll), each leaf await takes one unit; with none left, the await suspends the task and wakes it
// at once, so it goes to the back of its queue and the worker picks again. Threads without a
// budget (event loops) are not limited: their microtask ordering is the contract there.
#pragma once

#include <cstdint>

#include <weft/platform/thread.hpp>

namespace weft::detail {

// Awaits per poll of a pool task (tokio's cooperative budget has the same size).
inline constexpr std::uint32_t coop_budget_per_poll = 128;

struct coop_budget_tag;
// The calling thread's remaining budget, or null when it has none.
using coop_budget_slot = platform::thread_slot<std::uint32_t, coop_budget_tag>;

// True when the await may complete inline; false when the budget is spent (the caller must
// suspend and wake itself).
inline bool coop_budget_take() noexcept {
  std::uint32_t* budget = coop_budget_slot::get();
  if (budget == nullptr) return true;
  if (*budget == 0) return false;
  --*budget;
  return true;
}

}  // namespace weft::detail
