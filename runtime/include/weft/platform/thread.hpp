// weft/platform/thread.hpp — platform threads and per-thread slots.
//
// platform::thread starts a thread of the flavor (an OS thread in real, a fiber in sim, a Relacy
// thread in model); platform::thread_slot<T, Tag> is a per-thread pointer (thread_local in real,
// fiber-local in sim) — never use `thread_local` directly above the seam, because simulated
// threads share one OS thread. platform::current_thread_id() is a small sequential number, the
// same from run to run in the simulator (never an OS id or an address). platform::current_cpu()
// is the CPU the calling thread runs on, a hint (-1: unknown, as in sim and model).
#pragma once

#include <weft/platform/flavor.hpp>

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/thread.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/thread.hpp>
#else
#include <weft/platform/model/thread.hpp>
#endif
