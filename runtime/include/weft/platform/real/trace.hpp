// weft/platform/real/trace.hpp — task trace points cost nothing in production.
//
// The macros expand to unevaluated sizeof operands cast to void: no call, no argument evaluated,
// no code generated. task_trace_enabled lets tests (and nothing else) assert that.
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
