// weft/platform/model/trace.hpp — task trace points under the model checker: nothing.
//
// Relacy reports its own histories; a trace point must not add operations to the checked code,
// so the model flavor uses the real flavor's macros, which evaluate nothing and generate no code.
#pragma once

#include <weft/platform/real/trace.hpp>
