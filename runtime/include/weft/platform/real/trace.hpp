// weft/platform/real/trace.hpp — task trace points cost nothing in production.
//
// The macros expand to `((void)0)`: no call, no argument evaluated, no code generated.
// task_trace_enabled lets tests (and nothing else) assert that.
#pragma once

namespace weft::platform {

inline constexpr bool task_trace_enabled = false;

}  // namespace weft::platform

#define WEFT_TRACE_TASK(event, cell) ((void)0)
#define WEFT_TRACE_TASK_DETAIL(event, cell, detail) ((void)0)
