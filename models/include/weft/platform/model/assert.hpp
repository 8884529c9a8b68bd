// weft/platform/model/assert.hpp — WEFT_ASSERT as a Relacy assertion.
//
// A failed assertion fails the current Relacy iteration (USER ASSERT FAILED) and Relacy prints the
// interleaving that led there, instead of aborting the process: the checker goes on to report the
// schedule, and a model that expects the failure (a known-bad twin) can observe it.
#pragma once

#include <weft/platform/model/relacy.hpp>

#define WEFT_ASSERT(cond) RL_ASSERT(cond)
