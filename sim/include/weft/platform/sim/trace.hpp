// weft/platform/sim/trace.hpp — task trace points recorded by the simulation engine.
//
// trace_task() hands the event to the run active on this OS thread, which writes it into the
// trace (and so into the trace hash) and the Chrome trace. It is not a scheduling point: no step
// is counted and the scheduler is not consulted, so a seed explores the same interleaving with
// or without trace points. Outside a run (unit tests of the sim flavor, static initialisation)
// it does nothing. The cell's address only identifies the task inside the engine (the trace
// names tasks by their order of appearance in the run); it never enters the trace.
#pragma once

#include <cstdint>

#include <weft/sim/hooks.hpp>

namespace weft::platform {

inline constexpr bool task_trace_enabled = true;

inline void trace_task(task_event e, const void* cell, std::uint64_t id, const char* detail = nullptr) noexcept {
  sim::detail::trace_task(static_cast<std::uint8_t>(e), task_event_name(e), cell, id, detail);
}

}  // namespace weft::platform

#define WEFT_TRACE_TASK(event, cell) \
  (::weft::platform::trace_task(::weft::platform::task_event::event, (cell), (cell)->id()))
#define WEFT_TRACE_TASK_DETAIL(event, cell, detail) \
  (::weft::platform::trace_task(::weft::platform::task_event::event, (cell), (cell)->id(), (detail)))
