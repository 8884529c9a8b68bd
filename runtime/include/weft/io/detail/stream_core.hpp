// weft/io/detail/stream_core.hpp — the state a byte stream shares with its operations in flight.
//
// One read and one write at a time: the operation in flight is `reading` / `writing`, whether its
// leaf still awaits it or was dropped. A read that is dropped (its task aborted, a timeout
// elapsed) must not lose bytes: its operation stays in flight, owned by the core, and the bytes
// it read are kept in `overflow` for the next read. A new read first serves `overflow`, and while
// another read is in flight it waits for it to finish (so bytes are never reordered or split
// between two reads). Writes keep the same discipline: a new write waits until the one in flight
// has finished, so the stream's bytes stay in the order they were written.
//
// Any number of tasks may wait behind the operation in flight: all are woken when it finishes and
// poll again, so the first to poll goes next and the others wait again.
//
// Owner thread only (all of it is touched from the loop that owns the stream). Reference counted:
// the stream object holds one reference, each orphaned operation another, so the core outlives
// the stream while the kernel may still complete into it. Taking a reference off the owner thread
// is a usage error; a reference dropped there is handed to the owner's loop (`drop`), which
// releases it, so the count and the core's fields are never touched by two threads.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <weft/io/detail/io_op.hpp>
#include <weft/io/socket_address.hpp>

namespace weft::detail {

// Tasks waiting for an operation in flight to finish. A task polled again is not added twice;
// a dropped waiter's waker stays until the next wake_all (a spurious wake of its task).
class waiter_list {
 public:
  void add(const waker& w) {
    for (const waker& known : list_) {
      if (known.will_wake(w)) return;
    }
    list_.push_back(w);
  }
  void wake_all() noexcept {
    std::vector<waker> woken = std::move(list_);
    list_.clear();
    for (waker& w : woken) std::move(w).wake();
  }

 private:
  std::vector<waker> list_;
};

class stream_core {
 public:
  stream_core(io_owner owner, int fd, bool socket) noexcept : owner(std::move(owner)), fd(fd), socket(socket) {}
  stream_core(const stream_core&) = delete;
  stream_core& operator=(const stream_core&) = delete;

  // Owner thread only: usage_error elsewhere (a leaf or a copy made on another thread).
  void ref() {
    check_owner_thread();
    ++refs_;
  }
  // For an operation the core takes over from its dropped leaf, on the owner thread (where the
  // leaf was polled and is destroyed).
  void ref_for_orphan() noexcept { ++refs_; }
  // Owner thread only.
  void release() noexcept {
    if (--refs_ == 0) delete this;
  }
  // Drops one reference from any thread, closing the descriptor first when `close_first`: on the
  // owner thread at once, elsewhere on the owner's loop (or, when that loop accepts no more
  // work, on this thread: nothing on the loop uses the core any more).
  static void drop(stream_core* core, bool close_first) noexcept;

  // Closes the descriptor (once); later operations answer EBADF.
  void close() noexcept;
  // An awaited operation's result: the driver's cancel of an operation that close() ended reads
  // as EBADF, what an operation started after the close answers.
  std::int64_t result_after_close(std::int64_t result) const noexcept {
    return result == -ECANCELED && fd < 0 ? -EBADF : result;
  }

  // The read (write) in flight is over: a read (write) waiting for it may go.
  void finish_read() noexcept {
    reading = nullptr;
    read_waiters.wake_all();
  }
  void finish_write() noexcept {
    writing = nullptr;
    write_waiters.wake_all();
  }

  std::size_t take_overflow(std::byte* dst, std::size_t size) noexcept;
  bool has_overflow() const noexcept { return overflow_pos < overflow.size(); }

  io_owner owner;
  int fd;
  const bool socket;   // recv/send rather than read/write
  bool reads_inline = true;  // a file whose driver may answer a read now (driver::try_now)
  io_op* reading = nullptr;  // the read in flight (awaited, or dropped and kept by the core)
  io_op* writing = nullptr;  // the write in flight
  waiter_list read_waiters;   // reads waiting for `reading` to finish
  waiter_list write_waiters;  // writes waiting for `writing` to finish
  // The error a dropped read's operation met (a reset, say), kept for the next read as its
  // bytes are: the kernel reports it once.
  std::int64_t read_error = 0;
  std::vector<std::byte> overflow;
  std::size_t overflow_pos = 0;
  std::vector<int> accepted;      // a listener's connections accepted for a dropped accept
  struct kept_datagram {
    std::vector<std::byte> bytes;
    socket_address from;
  };
  std::vector<kept_datagram> datagrams;  // received for a dropped recv, served first

 private:
  ~stream_core();
  void check_owner_thread() const;
  int refs_ = 1;
};

// Owns a core reference.
class stream_ref {
 public:
  stream_ref() = default;
  explicit stream_ref(stream_core* core) noexcept : core_(core) {}
  // Owner thread only: usage_error elsewhere.
  stream_ref(const stream_ref& other) : core_(other.core_) {
    if (core_) core_->ref();
  }
  stream_ref(stream_ref&& other) noexcept : core_(std::exchange(other.core_, nullptr)) {}
  stream_ref& operator=(stream_ref other) noexcept {
    std::swap(core_, other.core_);
    return *this;
  }
  ~stream_ref() {
    if (core_) stream_core::drop(core_, false);
  }
  // Gives up the reference without releasing it (the caller takes it over).
  stream_core* detach() noexcept { return std::exchange(core_, nullptr); }
  stream_core* get() const noexcept { return core_; }
  stream_core* operator->() const noexcept { return core_; }
  explicit operator bool() const noexcept { return core_ != nullptr; }

 private:
  stream_core* core_ = nullptr;
};

// The reference the object a user holds (a socket, a listener) keeps: destroying it or assigning
// over it closes the descriptor at once, even while a dropped operation still holds the core;
// the driver cancels what is pending on it, and the operation keeps only its own memory.
class closing_ref : public stream_ref {
 public:
  closing_ref() = default;
  explicit closing_ref(stream_ref core) noexcept : stream_ref(std::move(core)) {}
  closing_ref(closing_ref&&) noexcept = default;
  closing_ref& operator=(closing_ref&& other) noexcept {
    if (this != &other) {
      if (stream_core* old = detach()) stream_core::drop(old, true);
      stream_ref::operator=(std::move(other));
    }
    return *this;
  }
  ~closing_ref() {
    if (stream_core* core = detach()) stream_core::drop(core, true);
  }
  // On the owner thread the core stays (later operations answer EBADF); on another thread the
  // reference goes to the owner's loop with the close, and this object is left empty.
  void close() noexcept {
    stream_core* core = get();
    if (core == nullptr) return;
    if (core->owner.on_owner_thread()) {
      core->close();
    } else {
      stream_core::drop(detach(), true);
    }
  }
};

}  // namespace weft::detail
