// weft/sim/trace.hpp — the event trace of a run and its 64-bit hash.
//
// Every event can be rendered as one line of text (with options::record_trace); the trace hash
// covers the same fields as the line, hashed as values (fnv1a::add_word per field, FNV-1a over
// the bytes of names and notes), whether or not the lines are rendered: the hash is computed for
// every event of every run, and rendering text there was most of the simulator's time. What
// enters it is only what is a function of (scenario, seed, options): step numbers, fiber ids,
// virtual nanoseconds, event kinds, operation names, and call sites as basename and line —
// never addresses, real time, OS thread ids or directory paths.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace weft::sim {

enum class event_kind : std::uint8_t {
  spawn,   // a fiber was created (fiber = new one, other = creator)
  run,     // the scheduler switched to `fiber`
  yield,   // `fiber` passed a scheduling point `op` at `site`
  block,   // `fiber` blocked at `site` (op); `value` = virtual deadline ns or -1
  wake,    // `fiber` was woken by `other` (0: the simulator); text "timeout" when timed out
  time,    // virtual time jumped to `value` ns
  fault,   // a fault of kind `op` was injected at `site`
  note,    // free text from a scenario or an oracle
  exit,    // `fiber` finished
  fail,    // the run failed; text says why
  task,    // a task-level event `op` (platform::task_event `value`) of task `task` on `fiber`
  world,   // a host or link changed (a boot, crash, shutdown, partition, hold...); text says what
  message, // a message between hosts, `op` "send" or "arrive": `value` its id, `other` the host
           // of that end (the sender's, or the receiver's)
};

// The header word each event adds to the hash: its kind (below 0x100) or task event, and flags
// that say which optional fields follow, so events that differ only in the fields they carry
// hash apart.
namespace trace_hash_word {
inline constexpr std::uint64_t has_op = 0x100;      // an operation name
inline constexpr std::uint64_t has_site = 0x200;    // a call site (basename and line)
inline constexpr std::uint64_t has_until = 0x400;   // a block's virtual deadline
inline constexpr std::uint64_t has_text = 0x800;    // free text
inline constexpr std::uint64_t task_event = 0x1000; // a task-level event (engine::record_task)
inline constexpr std::uint64_t has_detail = 0x2000; // a task event's detail (outcome, result)
}  // namespace trace_hash_word

struct trace_event {
  std::uint64_t step = 0;
  event_kind kind = event_kind::note;
  std::uint64_t fiber = 0;
  std::uint64_t other = 0;
  std::int64_t value = 0;
  std::int64_t now_ns = 0;
  std::string op;    // the operation (yield, block), fault kind or task event, if any
  std::string line;  // the rendered line (only with --trace; the hash covers the fields)
  // Task events only:
  std::uint64_t task = 0;     // the task's number in this run (1, 2, ... in order of appearance)
  std::uint64_t task_id = 0;  // the runtime's id (task_header::id(): per loop; 0 for cross-thread spawns)
  std::string detail;         // outcome (outcome, completed, abandoned) or suspended|completed (poll_end);
                              // a world or message event's text
};

// FNV-1a, 64-bit; add_word() takes a whole 64-bit value at once (xor, multiply, then folds the
// high half down so the next word's low bits meet all of this one's).
class fnv1a {
 public:
  void add(std::string_view bytes) noexcept {
    for (const char c : bytes) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  void add_word(std::uint64_t w) noexcept {
    hash_ ^= w;
    hash_ *= 0x100000001b3ULL;
    hash_ ^= hash_ >> 32;
  }
  std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// "basename:line" of a source_location file name.
std::string_view basename_of(const char* path) noexcept;
std::string hex16(std::uint64_t v);

void write_text(std::ostream& out, const std::vector<trace_event>& events);
// Chrome Trace Event JSON (opens in Perfetto and chrome://tracing): one lane (tid) per fiber.
// Time is the event's position in the trace: event i (its line number in the text trace, from 0)
// is at ts = 4*i "microseconds"; its step and virtual time are in its args. A lane holds
//   * `poll task N` complete slices (X), from poll_begin to poll_end of that task, on the fiber
//     that polled it; args: task, id, result (suspended | completed);
//   * `run` complete slices, the stretches the fiber was scheduled, split at poll boundaries so
//     that every run slice lies inside or outside a poll slice (proper nesting per lane);
//   * instants for blocks, wakes, faults, notes, exits and failures, and for task events
//     (`wake task N`, `task N adopted`, `task N completed` ...; args: task, id, state);
//   * a flow arrow (s/f, category "wake") from each wake that queued a poll to that poll's slice.
// Time jumps, failures and changes of hosts and links (world events: boots, crashes, partitions)
// are global instants. Each simulated host is a process (pid = host id + 1, named after the host
// and its address); its fibers are its lanes. A message between hosts is a flow arrow (category
// "message") from the send on the sender's lane to the delivery on the receiver's.
void write_chrome(std::ostream& out, const std::vector<trace_event>& events,
                  const std::vector<std::string>& fiber_names, const std::vector<std::uint32_t>& fiber_hosts = {},
                  const std::vector<std::string>& host_names = {});

}  // namespace weft::sim
