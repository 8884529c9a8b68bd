// weft/io/detail/io_op.hpp — one I/O operation in flight, and the leaf a task awaits it through.
//
// Buffer ownership: the kernel never sees a caller's buffer. An operation owns its staging
// buffer (and any address, path or statx record it hands the kernel) and is freed only when
// both the driver has completed it and its awaiter is done with it (io_handoff.hpp): a task
// dropped mid-read or mid-write leaves the operation alive until its completion arrives.
//
// Threads: an operation is created, submitted, cancelled, completed and freed on the thread of
// the loop that owns its I/O object; io_leaf refuses any other thread with usage_error.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include <weft/detail/io_handoff.hpp>
#include <weft/detail/loop_shared.hpp>
#include <weft/expected.hpp>
#include <weft/io/detail/staging_buffer.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/waker.hpp>

namespace weft::detail {

// Most bytes one read or write stages. Larger requests move at most this much per operation,
// which a read or write may always do (write_all and read_exact loop).
inline constexpr std::size_t io_staging_max = 256 * 1024;

inline std::error_code io_error_code(std::int64_t negative_errno) noexcept {
  return std::error_code(static_cast<int>(-negative_errno), std::system_category());
}

// The loop an I/O object belongs to: its driver, and the thread allowed to use it.
class io_owner {
 public:
  io_owner() = default;
  explicit io_owner(loop_shared* shared) noexcept : shared_(shared) {
    if (shared_) shared_->ref_inc();
  }
  io_owner(const io_owner& other) noexcept : io_owner(other.shared_) {}
  io_owner(io_owner&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)) {}
  io_owner& operator=(io_owner other) noexcept {
    std::swap(shared_, other.shared_);
    return *this;
  }
  ~io_owner() {
    if (shared_) shared_->release();
  }
  // The loop driving this thread (for creating an I/O object); throws usage_error without one.
  static io_owner current(const char* what);

  // Throws usage_error when called off the owner thread or on an empty (moved-from) object.
  platform::driver& driver(const char* what) const;
  bool valid() const noexcept { return shared_ != nullptr; }
  loop_shared* shared() const noexcept { return shared_; }
  // Whether the calling thread is the owner loop's (false on an empty object).
  bool on_owner_thread() const noexcept { return shared_ != nullptr && shared_->on_owner_thread(); }
  // Any thread, on a valid object: queues `item` on the owner's loop (loop_shared::submit_internal,
  // which keeps the loop's shared part alive until its notify returns). The item may free this
  // object (its core) as soon as it is queued.
  void post(runnable* item) const noexcept;

 private:
  loop_shared* shared_ = nullptr;
};

// Closes `fd` through the owner's driver. On another thread the close is posted to the owner's
// loop; when that loop no longer accepts work it is closed on the calling thread.
void close_descriptor(const io_owner& owner, int fd) noexcept;

// Runs a control call now through the owner's driver (owner thread only: usage_error otherwise).
std::int64_t execute_control(const io_owner& owner, const platform::io_request& r, const char* what);

// One operation. Subclasses add what the kernel must see (staging bytes, an address, a statx
// record) and, optionally, what happens to a result nobody awaits any more.
class io_op : public platform::io_operation {
 public:
  io_op() = default;
  io_op(const io_op&) = delete;
  io_op& operator=(const io_op&) = delete;

  void complete(std::int64_t result) noexcept final {
    // The waker is taken first: after complete() answers wake_waiter the operation belongs to
    // the waiter, and the completer touches nothing of it (the hand-off model checks that rule).
    waker w = std::move(waiter);
    if (handoff.complete(result) == io_handoff::after_complete::free_operation) {
      orphaned(result);
      destroy();
    } else {
      std::move(w).wake();
    }
  }
  // The awaiter is done with the operation before its completion: ask the driver to stop it.
  // A result that already arrived is nobody's now: orphaned() disposes of what it holds (an
  // accepted connection, a connected socket) before the operation goes.
  void abandon(platform::driver& d) noexcept {
    if (handoff.abandon() == io_handoff::after_abandon::free_operation) {
      orphaned(handoff.result());
      destroy();
    } else {
      d.cancel(*this);
    }
  }
  // Before submission: the operation finished at once (a connection the listener kept), and is
  // awaited, or abandoned, as if the driver had completed it.
  void complete_now(std::int64_t result) noexcept { (void)handoff.complete(result); }
  void destroy() noexcept {
    platform::io_operation_freed(*this);  // the simulator checks the kernel no longer holds it
    delete this;
  }

  io_handoff handoff;
  waker waiter;

 protected:
  virtual ~io_op() = default;
  // A result that arrived after the awaiter left (a stream's read keeps its bytes, say).
  virtual void orphaned(std::int64_t) noexcept {}
  // The leaf went without ever submitting: what the operation made for the kernel (a connect's
  // socket) is nobody's.
  virtual void never_submitted() noexcept {}

  template <class, class>
  friend class io_leaf;
};

// An operation with a staging buffer of its own.
class staged_op : public io_op {
 public:
  explicit staged_op(std::size_t size) : staging(size) {}
  staging_buffer staging;  // at least the bytes asked for; the request's size says how many
};

// The leaf a task awaits: submits at its first poll, is ready when the driver completed the
// operation, and abandons the operation if destroyed before that (the driver then cancels it).
// `Finish` turns (operation, raw result) into the awaited value; the operation is null for a
// result decided before submission.
template <class Op, class Finish>
class io_leaf {
 public:
  using result_type = decltype(std::declval<Finish&>()(std::declval<Op*>(), std::int64_t{}));

  io_leaf(io_owner owner, std::unique_ptr<Op> op, Finish finish, const char* what)
      : owner_(std::move(owner)), op_(op.release()), finish_(std::move(finish)), what_(what) {}
  // An operation refused before submission (bad argument, closed object): ready at once.
  io_leaf(std::int64_t immediate, Finish finish) : finish_(std::move(finish)), immediate_(immediate) {}
  // An operation that finished without the driver (complete_now): ready at once, and abandoned
  // through orphaned() if the leaf goes unawaited.
  io_leaf(io_owner owner, std::unique_ptr<Op> done, Finish finish)
      : owner_(std::move(owner)), op_(done.release()), finish_(std::move(finish)), submitted_(true) {
    WEFT_ASSERT(op_->handoff.ready());
  }
  io_leaf(io_leaf&& other) noexcept
      : owner_(std::move(other.owner_)),
        op_(std::exchange(other.op_, nullptr)),
        finish_(std::move(other.finish_)),
        what_(other.what_),
        immediate_(other.immediate_),
        submitted_(std::exchange(other.submitted_, false)) {}
  io_leaf(const io_leaf&) = delete;
  io_leaf& operator=(const io_leaf&) = delete;
  io_leaf& operator=(io_leaf&&) = delete;
  ~io_leaf() { release(); }

  // The operation before submission (to fill in more of its request), or null for an immediate
  // result.
  Op* operation() noexcept { return submitted_ ? nullptr : op_; }

  bool poll_ready(const waker& w) {
    if (op_ == nullptr) return true;
    if (!submitted_) {
      platform::driver& d = owner_.driver(what_);
      op_->waiter = w;
      d.submit(*op_);
      submitted_ = true;
      return false;
    }
    if (op_->handoff.ready()) return true;
    if (!op_->waiter.will_wake(w)) op_->waiter = w;
    return false;
  }

  result_type await_resume() {
    if (op_ == nullptr) return finish_(static_cast<Op*>(nullptr), immediate_);
    WEFT_ASSERT(op_->handoff.ready());
    struct free_after {
      io_op* op;
      ~free_after() { op->destroy(); }
    } guard{std::exchange(op_, nullptr)};
    submitted_ = false;
    return finish_(static_cast<Op*>(guard.op), guard.op->handoff.result());
  }

 private:
  void release() noexcept {
    io_op* op = std::exchange(op_, nullptr);
    if (op == nullptr) return;
    if (!submitted_) {
      op->never_submitted();
      op->destroy();
      return;
    }
    // Only the owner thread reaches here: an operation is awaited by a frame of its own loop.
    op->abandon(owner_.shared()->driver);
  }

  io_owner owner_;
  Op* op_ = nullptr;
  Finish finish_;
  const char* what_ = "";
  std::int64_t immediate_ = 0;
  bool submitted_ = false;
};

}  // namespace weft::detail
