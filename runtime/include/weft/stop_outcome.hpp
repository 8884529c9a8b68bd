// weft/stop_outcome.hpp — what stopping a runtime achieved.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>

namespace weft {

// Why stop() could not wait.
enum class stop_error {
  called_from_worker,             // waiting would deadlock: this thread is one of the workers
  called_from_blocking_callback,  // waiting would deadlock: this thread runs the runtime's blocking work
};

inline constexpr const char* to_string(stop_error e) noexcept {
  return e == stop_error::called_from_worker ? "called_from_worker" : "called_from_blocking_callback";
}

// What shutdown had to cut short.
struct stop_counts {
  std::uint64_t tasks_cancelled = 0;       // unfinished tasks cancelled on their own worker
  std::uint64_t callbacks_discarded = 0;   // queued worker callbacks destroyed unrun
  std::uint64_t blocking_discarded = 0;    // queued blocking callbacks destroyed unrun
  std::uint64_t total() const noexcept { return tasks_cancelled + callbacks_discarded + blocking_discarded; }
  friend bool operator==(const stop_counts&, const stop_counts&) = default;
};

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

// What a graceful drain achieved (the runtime is still running either way).
enum class drain_outcome {
  drained,    // every accepted task and blocking callback finished
  timed_out,  // the deadline passed first; nothing was aborted
};

}  // namespace weft
