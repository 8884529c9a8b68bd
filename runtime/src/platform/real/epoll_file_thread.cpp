// epoll_file_thread.cpp — the file thread's queue hand-offs and its run loop.
#include "epoll_file_thread.hpp"

#include "backends.hpp"

namespace weft::platform {

namespace {

// Whether a not-yet-started operation would act on `fd`, so closing `fd` must take it back.
bool names_fd(const io_operation& op, int fd) noexcept {
  switch (op.opcode) {
    case io_opcode::openat:
    case io_opcode::statx:
    case io_opcode::unlinkat:
    case io_opcode::renameat:
      return op.dirfd == fd;
    default:
      return op.fd == fd;
  }
}

}  // namespace

void epoll_file_thread::enqueue(io_operation& op) {
  sync::unique_lock<sync::mutex> hold(lock_);
  if (!thread_.joinable()) {
    WEFT_ASSERT(!shared_.with([](const shared_state& s) { return s.stopping; }));
    thread_ = thread([this] { run(); });
  }
  shared_.with_mut([&](shared_state& s) { s.pending.push_back(op); });
  work_.notify_one();
}

bool epoll_file_thread::try_cancel(io_operation& op) noexcept {
  sync::lock_guard<sync::mutex> hold(lock_);
  return shared_.with_mut([&](shared_state& s) { return s.pending.remove(op); });
}

void epoll_file_thread::cancel_pending_on(int fd, io_op_queue& out) noexcept {
  sync::lock_guard<sync::mutex> hold(lock_);
  shared_.with_mut([&](shared_state& s) {
    io_op_queue keep;
    while (io_operation* op = s.pending.pop_front()) {
      if (names_fd(*op, fd)) {
        out.push_back(*op);
      } else {
        keep.push_back(*op);
      }
    }
    s.pending.splice_back(keep);
  });
}

void epoll_file_thread::cancel_all_pending(io_op_queue& out) noexcept {
  sync::lock_guard<sync::mutex> hold(lock_);
  shared_.with_mut([&](shared_state& s) { out.splice_back(s.pending); });
}

void epoll_file_thread::take_done(io_op_queue& out) noexcept {
  sync::lock_guard<sync::mutex> hold(lock_);
  shared_.with_mut([&](shared_state& s) { out.splice_back(s.done); });
  // relaxed: written under lock_, like the thread's store of true (the lock orders the two).
  done_hint_.store(false, std::memory_order_relaxed);
}

void epoll_file_thread::wait_idle() {
  sync::unique_lock<sync::mutex> hold(lock_);
  while (shared_.with([](const shared_state& s) { return s.running || !s.pending.empty(); })) {
    idle_.wait(hold);
  }
}

void epoll_file_thread::stop() {
  {
    sync::lock_guard<sync::mutex> hold(lock_);
    shared_.with_mut([](shared_state& s) { s.stopping = true; });
    work_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

// 1. Wait for a pending operation (or stop with nothing pending).
// 2. Run it as a plain system call, outside the lock (it may sleep in the kernel).
// 3. Under the lock, put it on `done` and tell a wait_idle() caller; then wake the owner, outside
//    the lock so the owner's poll() never waits behind the eventfd write.
void epoll_file_thread::run() {
  sync::unique_lock<sync::mutex> hold(lock_);
  for (;;) {
    io_operation* op = shared_.with_mut([](shared_state& s) {
      io_operation* next = s.pending.pop_front();
      s.running = next != nullptr;
      return next;
    });
    if (op == nullptr) {
      if (shared_.with([](const shared_state& s) { return s.stopping; })) return;
      work_.wait(hold);
      continue;
    }
    hold.unlock();
    const std::int64_t result = execute_now(*op);
    hold.lock();
    shared_.with_mut([&](shared_state& s) {
      op->driver_slot = static_cast<std::uintptr_t>(result);
      s.done.push_back(*op);
      s.running = false;
    });
    // relaxed: set under lock_; has_done() is a hint and take_done() reads under the lock.
    done_hint_.store(true, std::memory_order_relaxed);
    idle_.notify_all();
    hold.unlock();
    owner_.wake();
    hold.lock();
  }
}

}  // namespace weft::platform
