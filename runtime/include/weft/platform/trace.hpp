// weft/platform/trace.hpp — task-level trace points.
//
// WEFT_TRACE_TASK(event, cell) marks a step in a task's life: `event` names an enumerator of
// platform::task_event, `cell` is a plain pointer to the task's header (it is evaluated more than
// once; pass `this` or a local). In the `real` and `model` flavors the macro expands to
// `(void)sizeof(...)` of its arguments: nothing is evaluated and no code is generated, so
// production pays nothing. In the `sim` flavor it records the event in the running simulation's
// trace (a no-op outside a run). It is never a scheduling point: adding or removing trace points
// does not change which interleavings a seed explores (only the trace text and its hash).
//
// WEFT_TRACE_TASK_DETAIL(event, cell, detail) adds a string with static storage duration (an
// outcome name, say) to the event.
#pragma once

#include <weft/platform/flavor.hpp>

#include <cstdint>

namespace weft::platform {

enum class task_event : std::uint8_t {
  spawned,           // the cell was created (on the spawning thread)
  adopted,           // the owner loop took the cell into its owned-task list; first poll queued
  woken,             // a wake that queued a poll, or a self-wake inside the task's own poll
  wake_coalesced,    // a wake that needed no new poll (already scheduled or running, or complete)
  cancel_requested,  // request_cancel (abort) was called
  poll_begin,        // the owner thread started a poll (runnable::run)
  poll_end,          // that poll returned (the task suspended on a leaf, or completed)
  outcome,           // the output was stored; detail = value | panicked | cancelled | rejected
  cancelled_at_shutdown,  // the owner loop shut down with the task unfinished
  abandoned,         // the cell was never adopted (refused submission, or left in a closed inbox)
  completed,         // complete() began: the output is stored; `complete` is published next
  count_
};

inline constexpr const char* task_event_name(task_event e) noexcept {
  switch (e) {
    case task_event::spawned: return "spawned";
    case task_event::adopted: return "adopted";
    case task_event::woken: return "woken";
    case task_event::wake_coalesced: return "wake_coalesced";
    case task_event::cancel_requested: return "cancel_requested";
    case task_event::poll_begin: return "poll_begin";
    case task_event::poll_end: return "poll_end";
    case task_event::outcome: return "outcome";
    case task_event::cancelled_at_shutdown: return "cancelled_at_shutdown";
    case task_event::abandoned: return "abandoned";
    case task_event::completed: return "completed";
    case task_event::count_: break;
  }
  return "unknown";
}

}  // namespace weft::platform

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/trace.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/trace.hpp>
#else
#include <weft/platform/model/trace.hpp>
#endif
