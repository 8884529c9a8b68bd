// weft/platform/model/trace.hpp — task trace points under the model checker: nothing.
//
// Relacy reports its own histories; a trace point must not add operations to the checked code,
// so the macros expand to `((void)0)` (arguments not evaluated), as in the real flavor.
#pragma once

namespace weft::platform {

inline constexpr bool task_trace_enabled = false;

}  // namespace weft::platform

#define WEFT_TRACE_TASK(event, cell) ((void)0)
#define WEFT_TRACE_TASK_DETAIL(event, cell, detail) ((void)0)
