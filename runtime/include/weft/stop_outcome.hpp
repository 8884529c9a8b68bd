// weft/stop_outcome.hpp — what stopping a runtime achieved.
//
// Each enum here has a to_string (constexpr, the enumerator's own name, "unknown" for a value
// outside the enum), like join_error's and queue_error's; stop_counts and stop_outcome have one
// that spells out the counts or the reason too.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <string>

namespace weft {

// Why stop() could not wait.
enum class stop_error {
  called_from_worker,             // waiting would deadlock: this thread is one of the workers
  called_from_blocking_callback,  // waiting would deadlock: this thread runs the runtime's blocking work
};

inline constexpr const char* to_string(stop_error e) noexcept {
  switch (e) {
    case stop_error::called_from_worker: return "called_from_worker";
    case stop_error::called_from_blocking_callback: return "called_from_blocking_callback";
  }
  return "unknown";
}

// What shutdown had to cut short.
struct stop_counts {
  std::uint64_t tasks_cancelled = 0;       // unfinished tasks cancelled on their own worker
  std::uint64_t callbacks_discarded = 0;   // queued worker callbacks destroyed unrun
  std::uint64_t blocking_discarded = 0;    // queued blocking callbacks destroyed unrun
  std::uint64_t total() const noexcept { return tasks_cancelled + callbacks_discarded + blocking_discarded; }
  friend bool operator==(const stop_counts&, const stop_counts&) = default;
};

// "tasks_cancelled=1 callbacks_discarded=0 blocking_discarded=2": every count, zeros included.
inline std::string to_string(const stop_counts& c) {
  return "tasks_cancelled=" + std::to_string(c.tasks_cancelled) +
         " callbacks_discarded=" + std::to_string(c.callbacks_discarded) +
         " blocking_discarded=" + std::to_string(c.blocking_discarded);
}

class stop_outcome {
 public:
  enum kind {
    complete,    // everything accepted had finished; nothing was cut short
    incomplete,  // shutdown cancelled or discarded work: see counts()
    error,       // stop() could not wait here: see error_reason(); shutdown was requested
  };

  static stop_outcome make_complete() noexcept { return stop_outcome(complete, {}, stop_error::called_from_worker); }
  static stop_outcome make_incomplete(stop_counts c) noexcept { return stop_outcome(incomplete, c, stop_error::called_from_worker); }
  static stop_outcome make_error(stop_error e) noexcept { return stop_outcome(error, {}, e); }
  static stop_outcome from_counts(stop_counts c) noexcept { return c.total() == 0 ? make_complete() : make_incomplete(c); }

  kind get_kind() const noexcept { return kind_; }
  bool is_complete() const noexcept { return kind_ == complete; }
  bool is_incomplete() const noexcept { return kind_ == incomplete; }
  bool is_error() const noexcept { return kind_ == error; }
  const stop_counts& counts() const noexcept { return counts_; }
  stop_error error_reason() const noexcept { return error_; }

  friend bool operator==(const stop_outcome& a, kind k) noexcept { return a.kind_ == k; }
  friend bool operator==(const stop_outcome& a, const stop_outcome& b) noexcept {
    return a.kind_ == b.kind_ && a.counts_ == b.counts_ && (a.kind_ != error || a.error_ == b.error_);
  }

 private:
  stop_outcome(kind k, stop_counts c, stop_error e) noexcept : kind_(k), counts_(c), error_(e) {}
  kind kind_;
  stop_counts counts_;
  stop_error error_;
};

inline constexpr const char* to_string(stop_outcome::kind k) noexcept {
  switch (k) {
    case stop_outcome::complete: return "complete";
    case stop_outcome::incomplete: return "incomplete";
    case stop_outcome::error: return "error";
  }
  return "unknown";
}

// The kind, and what goes with it: "complete", "incomplete (tasks_cancelled=1 ...)" or
// "error (called_from_worker)".
inline std::string to_string(const stop_outcome& out) {
  switch (out.get_kind()) {
    case stop_outcome::complete: return to_string(stop_outcome::complete);
    case stop_outcome::incomplete: return std::string(to_string(stop_outcome::incomplete)) + " (" + to_string(out.counts()) + ")";
    case stop_outcome::error: return std::string(to_string(stop_outcome::error)) + " (" + to_string(out.error_reason()) + ")";
  }
  return to_string(out.get_kind());
}

// What a graceful drain achieved (the runtime is still running either way).
enum class drain_outcome {
  drained,    // every accepted task and blocking callback finished
  timed_out,  // the deadline passed first; nothing was aborted
};

inline constexpr const char* to_string(drain_outcome d) noexcept {
  switch (d) {
    case drain_outcome::drained: return "drained";
    case drain_outcome::timed_out: return "timed_out";
  }
  return "unknown";
}

}  // namespace weft
