// epoll_file_thread.hpp — the epoll backend's one thread for operations readiness cannot predict.
//
// Regular files, block devices and directories are always "ready" to epoll (or refused by it), yet
// their reads, writes, fsyncs and opens may sleep in the kernel; so do path operations (openat,
// statx, unlinkat, renameat). The epoll backend hands those here. One thread runs them in
// submission order (the backend's FIFO per fd holds for files too) and never completes anything:
// it puts each finished operation, its result in driver_slot, on the `done` list and wakes the
// owner, whose poll() delivers it.
//
// Invariants:
//   * An operation handed over is on exactly one of: `pending` (not started; the owner may still
//     take it back to cancel it), the worker's hands (`running`), `done`. Its driver_next and
//     driver_slot are touched only under lock_ from then until the owner takes it from `done`.
//   * `done_hint_` is true whenever `done` is non-empty (both change under lock_); it may be true
//     briefly after the owner emptied it, never false while `done` holds something it can see.
//   * The thread starts at the first enqueue and lives until stop(); stop() waits for it, so no
//     wake() reaches the backend after stop() returns.
//   * `pending` is unbounded on purpose: each entry is an operation its caller keeps alive.
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/platform/io_request.hpp>
#include <weft/platform/real/driver_backend.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>

#include "io_op_queue.hpp"

namespace weft::platform {

class epoll_file_thread {
 public:
  // `owner` is woken (wake()) after each finished operation.
  explicit epoll_file_thread(driver_backend& owner) noexcept : owner_(owner) {}
  ~epoll_file_thread() { stop(); }
  epoll_file_thread(const epoll_file_thread&) = delete;
  epoll_file_thread& operator=(const epoll_file_thread&) = delete;

  // Owner: queues `op`, starting the thread on first use (std::system_error if the OS refuses).
  void enqueue(io_operation& op);
  // Owner: takes `op` back if it has not started; false when it runs or already finished.
  bool try_cancel(io_operation& op) noexcept;
  // Owner: takes back every not-yet-started operation that names `fd` (as fd, or as dirfd of a
  // path operation), appending them to `out`.
  void cancel_pending_on(int fd, io_op_queue& out) noexcept;
  // Owner: takes back every not-yet-started operation, appending them to `out`.
  void cancel_all_pending(io_op_queue& out) noexcept;
  // Owner: appends every finished operation (result in driver_slot) to `out`.
  void take_done(io_op_queue& out) noexcept;
  // Owner: blocks until nothing is pending or running (finished ones wait in `done`).
  void wait_idle();
  // Owner: a cheap hint that take_done() would yield something.
  bool has_done() const noexcept {
    // relaxed: a hint only; take_done() reads the list under lock_, which orders the results.
    return done_hint_.load(std::memory_order_relaxed);
  }
  // Owner: lets the thread finish its queue, then joins it. Idempotent.
  void stop();

 private:
  struct shared_state {
    io_op_queue pending;
    io_op_queue done;
    bool running = false;   // the thread holds an operation outside the lists
    bool stopping = false;
  };

  void run();

  driver_backend& owner_;
  sync::mutex lock_;
  sync::condvar work_;  // the thread waits here for pending work or stop
  sync::condvar idle_;  // wait_idle() waits here for the thread to finish what it holds
  sync::cell<shared_state> shared_;  // under lock_
  sync::atomic<bool> done_hint_{false};
  thread thread_;  // owner-only: started by the first enqueue, joined by stop()
};

}  // namespace weft::platform
