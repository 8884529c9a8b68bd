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
// Owner thread only (all of it is touched from the loop that owns the stream). Reference counted:
// the stream object holds one reference, each orphaned operation another, so the core outlives
// the stream while the kernel may still complete into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <weft/io/detail/io_op.hpp>
#include <weft/io/socket_address.hpp>

namespace weft::detail {

class stream_core {
 public:
  stream_core(io_owner owner, int fd, bool socket) noexcept : owner(std::move(owner)), fd(fd), socket(socket) {}
  stream_core(const stream_core&) = delete;
  stream_core& operator=(const stream_core&) = delete;

  void ref() noexcept { ++refs_; }
  void release() noexcept {
    if (--refs_ == 0) delete this;
  }

  // Closes the descriptor (once); later operations answer EBADF.
  void close() noexcept;

  // The read (write) in flight is over: a read (write) waiting for it may go.
  void finish_read() noexcept {
    reading = nullptr;
    std::move(read_waiter).wake();
  }
  void finish_write() noexcept {
    writing = nullptr;
    std::move(write_waiter).wake();
  }

  std::size_t take_overflow(std::byte* dst, std::size_t size) noexcept;
  bool has_overflow() const noexcept { return overflow_pos < overflow.size(); }

  io_owner owner;
  int fd;
  const bool socket;   // recv/send rather than read/write
  bool reads_inline = true;  // a file whose driver may answer a read now (driver::try_now)
  io_op* reading = nullptr;  // the read in flight (awaited, or dropped and kept by the core)
  io_op* writing = nullptr;  // the write in flight
  waker read_waiter;         // a read waiting for `reading` to finish
  waker write_waiter;        // a write waiting for `writing` to finish
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
  int refs_ = 1;
};

// Owns a core reference.
class stream_ref {
 public:
  stream_ref() = default;
  explicit stream_ref(stream_core* core) noexcept : core_(core) {}
  stream_ref(const stream_ref& other) noexcept : core_(other.core_) {
    if (core_) core_->ref();
  }
  stream_ref(stream_ref&& other) noexcept : core_(std::exchange(other.core_, nullptr)) {}
  stream_ref& operator=(stream_ref other) noexcept {
    std::swap(core_, other.core_);
    return *this;
  }
  ~stream_ref() {
    if (core_) core_->release();
  }
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
      close();
      stream_ref::operator=(std::move(other));
    }
    return *this;
  }
  ~closing_ref() { close(); }
  void close() noexcept {
    if (get() != nullptr) get()->close();
  }
};

}  // namespace weft::detail
