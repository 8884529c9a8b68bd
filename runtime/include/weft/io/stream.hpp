// weft/io/stream.hpp — a byte stream over a descriptor the loop owns: a TCP or Unix stream
// socket, or a pipe.
//
// Every operation is a leaf awaitable (it composes with timeout()) that answers
// expected<T, std::error_code>. End of stream is a read of 0 bytes, not an error. A read or
// write may move fewer bytes than asked (read_exact / write_all loop). Dropping an operation
// before it completes cancels it in the kernel; a dropped read loses no bytes (the next read
// returns them) and a dropped write never lets the kernel see a freed buffer.
// All methods must be called on the thread of the loop the stream belongs to (else usage_error).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <span>
#include <system_error>

#include <sys/uio.h>

#include <weft/expected.hpp>
#include <weft/io/detail/stream_core.hpp>

namespace weft {

namespace detail {
class stream_read_leaf {
 public:
  stream_read_leaf(stream_ref core, std::span<std::byte> dst) noexcept : core_(std::move(core)), dst_(dst) {}
  stream_read_leaf(stream_read_leaf&& other) noexcept;
  stream_read_leaf(const stream_read_leaf&) = delete;
  stream_read_leaf& operator=(const stream_read_leaf&) = delete;
  stream_read_leaf& operator=(stream_read_leaf&&) = delete;
  ~stream_read_leaf();
  bool poll_ready(const waker& w);
  expected<std::size_t, std::error_code> await_resume();

 private:
  stream_ref core_;
  std::span<std::byte> dst_;
  class read_op* op_ = nullptr;
  std::int64_t result_ = 0;
  bool done_ = false;
};

class stream_write_leaf {
 public:
  // Stages the bytes of `chunks` (at most io_staging_max of them) at construction: the caller's
  // buffers may go away as soon as the expression that made the leaf has ended.
  stream_write_leaf(stream_ref core, std::span<const iovec> chunks);
  stream_write_leaf(stream_write_leaf&& other) noexcept;
  stream_write_leaf(const stream_write_leaf&) = delete;
  stream_write_leaf& operator=(const stream_write_leaf&) = delete;
  stream_write_leaf& operator=(stream_write_leaf&&) = delete;
  ~stream_write_leaf();
  bool poll_ready(const waker& w);
  expected<std::size_t, std::error_code> await_resume();

 private:
  stream_ref core_;
  class write_op* op_ = nullptr;
  std::int64_t result_ = 0;
  bool submitted_ = false;
  bool done_ = false;
};
}  // namespace detail

class byte_stream {
 public:
  byte_stream() = default;
  // Destroying or assigning over a stream closes its descriptor at once (detail::closing_ref).

  // Reads at most dst.size() bytes (0 at end of stream).
  detail::stream_read_leaf read(std::span<std::byte> dst);
  // Writes a prefix of `src`; answers how many bytes were written.
  detail::stream_write_leaf write(std::span<const std::byte> src);
  // Writes a prefix of the concatenated chunks.
  detail::stream_write_leaf writev(std::span<const std::span<const std::byte>> chunks);

  bool is_open() const noexcept { return core_ && core_->fd >= 0; }
  int native_handle() const noexcept { return core_ ? core_->fd : -1; }
  // Closes now (destruction does it too). Operations in flight complete with an error.
  void close() noexcept;

 protected:
  explicit byte_stream(detail::stream_ref core) noexcept : core_(std::move(core)) {}
  const detail::stream_ref& core() const noexcept { return core_; }

 private:
  detail::closing_ref core_;
};

}  // namespace weft
