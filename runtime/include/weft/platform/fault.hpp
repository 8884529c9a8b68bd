// weft/platform/fault.hpp — fault-injection points.
//
// WEFT_FAULT_POINT(kind) marks a place where the simulator may inject a fault of that kind. It is
// an expression of type bool: true means "inject now". In the real and model flavors it is the
// constant false, so the branch it guards compiles away.
#pragma once

#include <weft/platform/flavor.hpp>

#include <cstdint>

namespace weft::platform {

// Every kind of fault the runtime knows how to suffer. The simulator's options switch each on or
// off and give it a rate; the runtime only asks "now?" at the marked points.
enum class fault : std::uint8_t {
  spurious_wake,        // wake a task that nothing woke
  duplicate_wake,       // wake a task twice
  delayed_wake,         // hold a wake back for a while
  task_exception,       // throw from inside a task at an await point
  stop_request,         // request a stop at an arbitrary point
  inbox_full,           // remote inbox answers `full` although it has room
  blocking_saturated,   // blocking pool answers `full` although it has room
  worker_start_failure, // starting a worker thread fails
  // I/O faults: only the simulator's driver asks for these (the simulated kernel suffers them).
  io_latency,           // an I/O completion arrives after a seeded virtual latency
  io_short,             // a read or write moves fewer bytes than asked (at least one)
  io_reset,             // a stream connection is reset (ECONNRESET)
  io_error,             // a file operation fails with EIO
  io_reorder,           // ready completions of independent operations arrive out of order
  io_no_space,          // a file write or ftruncate that would grow a file fails ENOSPC
  fsync_lies,           // fsync/fdatasync succeed but make nothing durable (never in a swarm mix)
  net_loss,             // a datagram between two simulated hosts is lost on the way
  net_duplicate,        // a datagram between two simulated hosts arrives twice
  // User code: weft::sim::buggify(name) in a service (weft/buggify.hpp), not the runtime's own.
  buggify,              // an active buggify site answers true
  count_
};

inline constexpr const char* fault_name(fault f) noexcept {
  switch (f) {
    case fault::spurious_wake: return "spurious_wake";
    case fault::duplicate_wake: return "duplicate_wake";
    case fault::delayed_wake: return "delayed_wake";
    case fault::task_exception: return "task_exception";
    case fault::stop_request: return "stop_request";
    case fault::inbox_full: return "inbox_full";
    case fault::blocking_saturated: return "blocking_saturated";
    case fault::worker_start_failure: return "worker_start_failure";
    case fault::io_latency: return "io_latency";
    case fault::io_short: return "io_short";
    case fault::io_reset: return "io_reset";
    case fault::io_error: return "io_error";
    case fault::io_reorder: return "io_reorder";
    case fault::io_no_space: return "io_no_space";
    case fault::fsync_lies: return "fsync_lies";
    case fault::net_loss: return "net_loss";
    case fault::net_duplicate: return "net_duplicate";
    case fault::buggify: return "buggify";
    case fault::count_: break;
  }
  return "unknown";
}

}  // namespace weft::platform

#if defined(WEFT_FLAVOR_SIM)
#include <weft/platform/sim/fault.hpp>
#define WEFT_FAULT_POINT(kind) (::weft::platform::fault_point(::weft::platform::fault::kind))
#else
#define WEFT_FAULT_POINT(kind) (false)
#endif
