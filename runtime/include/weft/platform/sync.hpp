// weft/platform/sync.hpp — the synchronisation vocabulary of the seam.
//
// Above the seam, shared state is only ever one of:
//   sync::atomic<T>   an atomic word; every operation takes an explicit memory order
//                     (no defaults: each call site says what it pairs with);
//   sync::cell<T>     non-atomic shared data, reachable only through with()/with_mut() so that
//                     the model flavor can see, and race-check, every access;
//   sync::mutex       a mutual-exclusion lock (use with sync::lock_guard / sync::unique_lock);
//   sync::condvar     a condition variable over sync::unique_lock, with a deadline wait on the
//                     seam clock (virtual time in the simulator).
// Each flavor supplies these with identical signatures; a trailing weft::platform::source_location
// parameter lets the model and sim flavors report the production call site.
#pragma once

#include <weft/platform/flavor.hpp>

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/sync.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/sync.hpp>
#else
#include <weft/platform/model/sync.hpp>
#endif
