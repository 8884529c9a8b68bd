// weft/sim/trace.hpp — the event trace of a run and its 64-bit hash.
//
// Every event is rendered as one line of text; the trace hash is FNV-1a (64-bit) over those
// lines, each followed by '\n'. What enters a line is only what is a function of (scenario,
// seed, options): step numbers, fiber ids, virtual nanoseconds, operation names, and call sites
// as `basename:line` — never addresses, real time, OS thread ids or directory paths.
#pragma once

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
};

struct trace_event {
  std::uint64_t step = 0;
  event_kind kind = event_kind::note;
  std::uint64_t fiber = 0;
  std::uint64_t other = 0;
  std::int64_t value = 0;
  std::int64_t now_ns = 0;
  std::string op;    // the operation (yield, block) or fault kind, if any
  std::string line;  // the rendered line (what the hash covers)
};

// FNV-1a, 64-bit.
class fnv1a {
 public:
  void add(std::string_view bytes) noexcept {
    for (const char c : bytes) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// "basename:line" of a source_location file name.
std::string_view basename_of(const char* path) noexcept;
std::string hex16(std::uint64_t v);

void write_text(std::ostream& out, const std::vector<trace_event>& events);
// Chrome Trace Event JSON: one lane (tid) per fiber, `run` slices in scheduling steps (ts = step),
// instant events for blocks, wakes, faults, notes and time jumps.
void write_chrome(std::ostream& out, const std::vector<trace_event>& events,
                  const std::vector<std::string>& fiber_names);

}  // namespace weft::sim
