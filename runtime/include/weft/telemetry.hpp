// weft/telemetry.hpp — where the runtime reports what it does not return to anyone.
//
// A sink receives events from any thread, concurrently; record() is noexcept, so a sink that
// throws terminates the process (std::terminate) — the runtime cannot know which of its
// invariants a half-run sink left broken. Keep sinks cheap and non-blocking. The default sink
// drops everything.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <string_view>

namespace weft {

enum class telemetry_kind : std::uint8_t {
  inbox_overflow,        // first `full` answer of a loop's remote inbox (reported once per loop)
  callback_panicked,     // a micro/macrotask or timer callback threw; the loop went on
  microtask_starvation,  // a checkpoint ran past the threshold while a macrotask was waiting
  discarded_at_shutdown, // queued work destroyed unrun because its loop was destroyed (count)
  task_cancelled_at_shutdown,  // unfinished tasks cancelled by loop destruction (count)
  task_panic_unobserved,       // a detached task threw; nobody will read its join_error
};

inline constexpr const char* to_string(telemetry_kind k) noexcept {
  switch (k) {
    case telemetry_kind::inbox_overflow: return "inbox_overflow";
    case telemetry_kind::callback_panicked: return "callback_panicked";
    case telemetry_kind::microtask_starvation: return "microtask_starvation";
    case telemetry_kind::discarded_at_shutdown: return "discarded_at_shutdown";
    case telemetry_kind::task_cancelled_at_shutdown: return "task_cancelled_at_shutdown";
    case telemetry_kind::task_panic_unobserved: return "task_panic_unobserved";
  }
  return "unknown";
}

struct telemetry_event {
  telemetry_kind kind;
  std::string_view message;
  std::uint64_t count = 0;        // how many items the event is about, where it counts
  std::exception_ptr exception;   // for callback_panicked
};

class telemetry_sink {
 public:
  virtual ~telemetry_sink() = default;
  virtual void record(const telemetry_event& event) noexcept = 0;
};

// The default sink: drops every event.
std::shared_ptr<telemetry_sink> noop_telemetry();

}  // namespace weft
