// weft/sim/hooks.hpp — the narrow interface between the sim flavor of the seam and the engine.
//
// The headers under weft/platform/sim/ (atomics, mutex, condvar, clock, thread, fault points)
// call only these functions; the engine (weft/sim/engine.hpp, sim/src/engine.cpp) implements
// them for the run active on the calling OS thread. Outside a run (static initialisation, the
// runner between seeds) every hook degrades to a plain single-threaded meaning: yields do
// nothing, time stands still at the epoch, ids are 0.
//
// This header must not include <weft/platform/clock.hpp> (the clock header includes it), so it
// names steady_clock's time_point directly; it is the same type as weft::instant.
#pragma once

#include <weft/compiler_support.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <weft/platform/source_location.hpp>
#include <vector>

namespace weft::sim::io {
class world;
}  // namespace weft::sim::io

namespace weft::platform {
struct probe_site;
}  // namespace weft::platform

namespace weft::sim::detail {

struct fiber_record;
using time_point = std::chrono::steady_clock::time_point;

// The fibers blocked on one primitive (a mutex, a condvar, a join). Order is arrival order; the
// engine decides (from the seed) which one a notify_one wakes.
struct wait_list {
  std::vector<fiber_record*> fibers;
};

enum class wake_reason : std::uint8_t { notified, timeout };

// A scheduling point: the seeded strategy may switch to another ready fiber here. `explicit_yield`
// (yield_thread) asks to let others run first when any are ready.
void yield_point(const char* op, const weft::platform::source_location& loc, bool explicit_yield = false) noexcept;

// Blocks the calling fiber on `list` until a notify picks it or the virtual `deadline` passes.
wake_reason wait(wait_list& list, const char* op, const weft::platform::source_location& loc,
                 const time_point* deadline);
// Wakes one (seeded choice) / every fiber of `list`. Returns how many were woken.
std::size_t notify_one(wait_list& list) noexcept;
std::size_t notify_all(wait_list& list) noexcept;

// True while the caller runs on a fiber of an active run.
bool in_run() noexcept;
std::uint64_t current_fiber_id() noexcept;
unsigned cores() noexcept;
time_point now() noexcept;
std::uint64_t entropy() noexcept;
bool fault_point(std::uint8_t kind, const char* name, const weft::platform::source_location& loc) noexcept;
// A task-level event (platform::task_event `event`, named `name`) of the task cell at `cell`
// (runtime id `id`), with an optional static string `detail`. Recorded in the trace; never a
// scheduling point. Outside a run: nothing.
void trace_task(std::uint8_t event, const char* name, const void* cell, std::uint64_t id,
                const char* detail) noexcept;
// Records a failure of the run (misuse of a primitive, a broken invariant) without stopping it.
void report_failure(const char* what, const weft::platform::source_location& loc) noexcept;
// An oracle saw a broken invariant that leaves memory nobody may touch any more (an I/O operation
// freed while the simulated kernel holds it): inside a run, fails the run with `what` and stops
// it at once, as a failed assertion does (never returns to the caller); outside a run, prints and
// aborts the process.
[[noreturn]] void stop_run(const char* what) noexcept;
// A WEFT_ASSERT failed: inside a run, fails the run and abandons its fibers (never returns to
// the caller); outside a run, prints and aborts the process.
[[noreturn]] void assertion_failed(const char* condition, const char* file, int line) noexcept;

// The simulated host the calling fiber runs on, and which incarnation of it (a crash starts the
// next): {0, 0} outside a run and for every thread of a scenario that adds no hosts.
struct host_tag {
  std::uint32_t host = 0;
  std::uint32_t incarnation = 0;
};
host_tag current_host() noexcept;
// A message between hosts leaves (`arrival` false; `host` the sender's) or is delivered to the
// thread that receives it (`host` the receiver's): a trace event, never a scheduling point.
void trace_message(bool arrival, std::uint64_t id, std::uint32_t host, std::string_view text) noexcept;

// The simulated kernel of the run active on this OS thread (created at its first use, destroyed
// with the run, so nothing of it reaches the next seed), or null outside a run.
io::world* io_world() noexcept;
// That kernel if this run has created it, else null (never creates it).
io::world* existing_io_world() noexcept;
// Whether an I/O fault of `kind` strikes now: drawn from the run's fault stream at the kind's
// rate, as fault_point() does, but not a scheduling point (the simulated kernel is in the middle
// of an operation and must not let another thread in). A fault that strikes is in the trace.
bool io_fault(std::uint8_t kind, const char* name) noexcept;
// A number in [0, bound) from the run's fault stream: the size of a fault that struck (a
// latency, a short count). bound >= 1; 0 outside a run.
std::uint64_t fault_draw(std::uint64_t bound) noexcept;
// A note in the trace (and its hash); not a scheduling point. Nothing outside a run.
void trace_note(const char* text) noexcept;

// User code's fault sites and coverage probes (weft/buggify.hpp). buggify: whether the site
// `name` misbehaves now, drawn from the run's fault stream when the `buggify` fault kind is on and
// the site is active in this run; never a scheduling point; false outside a run. register_probe:
// a probe site linked into the program (before main). probe_hit: a pass over a site, counted in
// the active run (nothing outside one).
bool buggify(std::string_view name) noexcept;
void register_probe(const weft::platform::probe_site& site);
void probe_hit(const weft::platform::probe_site& site) noexcept;

// Fibers (simulated threads).
fiber_record* spawn(std::function<void()> fn, const weft::platform::source_location& loc);
void join(fiber_record* fiber, const weft::platform::source_location& loc);
void detach(fiber_record* fiber) noexcept;
// A platform::thread destroyed or overwritten while joinable (an OS thread would terminate):
// inside a run, a failure that stops the run at once; no fiber, the caller included, runs again.
// Outside a run, or while one is already ending, the fiber is only marked detached.
void drop_joinable(fiber_record* fiber) noexcept;

// Fiber-local slots: a process-wide index per slot, a per-fiber value.
std::size_t slot_allocate() noexcept;
void*& slot(std::size_t index) noexcept;

}  // namespace weft::sim::detail
