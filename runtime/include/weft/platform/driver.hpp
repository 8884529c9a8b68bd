// weft/platform/driver.hpp — the event source an event loop blocks on, and its I/O.
//
// A driver belongs to one event loop. Every flavor's `platform::driver` offers:
//
//   driver(const driver_options&)       may throw io_unavailable_error (io_uring required, absent)
//   void wait(optional<instant>)        owner: block until notify(), a completion, or the deadline
//   void notify()                       any thread: make the current or next wait() return
//   owner_activity activity()           any thread, a hint (owner_activity.hpp): running,
//                                       spinning idle in wait(), or other; flavors whose wait
//                                       never spins answer `other`
//   int owner_cpu()                     any thread, a hint: the CPU the owner last began to wait
//                                       on; -1 when unknown (always, outside `real`)
//   void submit(io_operation&)          owner: start an operation; it completes exactly once
//   void cancel(io_operation&)          owner: ask an in-flight operation to stop early; it still
//                                       completes (with -ECANCELED, or its result if it won the race)
//   int64_t execute(const io_request&)  owner: run a control call now (result or -errno)
//   int64_t try_now(const io_request&)  owner: a positional `read` of a file, run now straight
//                                       into r.data when it needs no waiting (the bytes are
//                                       cached): its result (>= 0); -EAGAIN when it would wait;
//                                       any other -errno when the driver never reads that
//                                       descriptor so (ask no more). Then submit() it instead.
//   size_t poll()                       owner: deliver ready completions (op.complete()); never blocks
//   bool has_completions()              owner: a cheap hint that poll() would deliver something
//   size_t in_flight()                  owner: submitted and not yet completed
//   void reap_all()                     owner: cancel everything in flight and deliver every
//                                       completion; returns with in_flight() == 0
//   io_driver_status status()           which backend runs, and why io_uring does not
//
// The wait/notify contract:
//   * wait() returns after a notify() that happened since the previous wait() returned, at the
//     deadline, when a completion is ready, or spuriously (the loop re-checks everything);
//   * a notify() is never lost: one that races a wait() makes that wait (or the next) return;
//   * notify() is cheap when the owner is not blocked (no system call).
// Completions run only inside poll() and reap_all(), so an operation's complete() never runs
// inside wait() or nested in another completion.
//
// Every flavor also offers, as a free function,
//   void io_operation_freed(const io_operation&)   called by whoever frees an operation, just
//                                       before its memory goes
// The sim flavor fails and stops the run when the simulated kernel still holds that operation
// (submitted, complete() not called yet): its buffers may still be written. The real and model
// flavors define it as an inline no-op.
#pragma once

#include <weft/platform/flavor.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/platform/owner_activity.hpp>

#if defined(WEFT_FLAVOR_REAL)
#include <weft/platform/real/driver.hpp>
#elif defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/driver.hpp>
#else
#include <weft/platform/model/driver.hpp>
#endif
