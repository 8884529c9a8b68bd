// weft/join_error.hpp — why a task produced no value.
#pragma once

#include <weft/compiler_support.hpp>

#include <exception>
#include <stdexcept>
#include <string>

#include <weft/queue_error.hpp>

namespace weft {

class join_error {
 public:
  enum kind {
    panicked,   // the task threw; exception() holds what it threw
    cancelled,  // the task was aborted, or its loop/runtime shut down before it finished
    rejected,   // the task was never admitted (its loop/runtime was closed); it never ran
  };

  join_error() noexcept = default;
  join_error(kind k) noexcept : kind_(k) {}  // NOLINT: implicit, so `== join_error::cancelled` reads well
  static join_error from_panic(std::exception_ptr e) noexcept {
    join_error err(panicked);
    err.exception_ = std::move(e);
    return err;
  }
  // `rejected`, saying why the submission was refused.
  static join_error rejected_because(queue_error reason) noexcept {
    join_error err(rejected);
    err.reason_ = reason;
    return err;
  }

  kind get_kind() const noexcept { return kind_; }
  bool is_panicked() const noexcept { return kind_ == panicked; }
  bool is_cancelled() const noexcept { return kind_ == cancelled; }
  bool is_rejected() const noexcept { return kind_ == rejected; }
  // What the task threw (set only for `panicked`).
  const std::exception_ptr& exception() const noexcept { return exception_; }
  // Why a `rejected` submission was refused: `closed` (shut down) or `full` (at capacity).
  queue_error rejection_reason() const noexcept { return reason_; }
  // Throws what the task threw (for `panicked`) or a std::runtime_error naming the kind.
  [[noreturn]] void rethrow() const;

  friend bool operator==(const join_error& a, const join_error& b) noexcept { return a.kind_ == b.kind_; }
  friend bool operator==(const join_error& a, kind b) noexcept { return a.kind_ == b; }

 private:
  kind kind_ = cancelled;
  queue_error reason_ = queue_error::closed;
  std::exception_ptr exception_;
};

inline constexpr const char* to_string(join_error::kind k) noexcept {
  switch (k) {
    case join_error::panicked: return "panicked";
    case join_error::cancelled: return "cancelled";
    case join_error::rejected: return "rejected";
  }
  return "unknown";
}

// Thrown when a task's result is demanded as a value (block_on) but the task has none.
class task_failed : public std::runtime_error {
 public:
  explicit task_failed(join_error e)
      : std::runtime_error(std::string("weft task ") + to_string(e.get_kind())), error_(e) {}
  const join_error& error() const noexcept { return error_; }

 private:
  join_error error_;
};

inline void join_error::rethrow() const {
  if (kind_ == panicked && exception_) std::rethrow_exception(exception_);
  throw task_failed(*this);
}

// Thrown from a task (or an operation it awaits) to complete the task as `cancelled` rather than
// `panicked`: the operation was shut down, not broken.
class operation_cancelled : public std::runtime_error {
 public:
  operation_cancelled() : std::runtime_error("weft operation cancelled") {}
};

// Thrown inside a task at an await point by the simulator's `task_exception` fault (never in
// the real flavor): the task completes as `panicked` with it, like any task that throws.
class injected_fault : public std::runtime_error {
 public:
  injected_fault() : std::runtime_error("weft: injected fault (simulator)") {}
};

// Thrown on a misuse of the API that would otherwise deadlock or corrupt the loop: re-entering a
// driving call from inside the loop, a blocking join() on the loop's own thread, and the like.
class usage_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace weft
