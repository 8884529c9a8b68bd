// weft/platform/model/trace.hpp — task trace points under the model checker: nothing.
//
// Relacy reports its own histories; a trace point must not add operations to the checked code,
// so the macros evaluate nothing and generate no code, as in the real flavor.
#pragma once

namespace weft::platform {

inline constexpr bool task_trace_enabled = false;

}  // namespace weft::platform

// The operands of sizeof are not evaluated; naming them keeps the enumerator checked and a
// variable used only by trace points from being reported as unused.
#define WEFT_TRACE_TASK(event, cell) \
  ((void)sizeof(::weft::platform::task_event::event), (void)sizeof(cell))
#define WEFT_TRACE_TASK_DETAIL(event, cell, detail) \
  ((void)sizeof(::weft::platform::task_event::event), (void)sizeof(cell), (void)sizeof(detail))
