// buffers.hpp — the caller's memory of one request as a list of (pointer, length) pieces, whatever
// the opcode spelled it as (a buffer, an iovec array, a msghdr), and copies into and out of it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>

#include <sys/socket.h>
#include <sys/uio.h>

#include <weft/platform/io_request.hpp>

namespace weft::sim::io {

class buffers {
 public:
  explicit buffers(const platform::io_request& r) noexcept {
    using platform::io_opcode;
    switch (r.opcode) {
      case io_opcode::readv:
      case io_opcode::writev:
        pieces_ = static_cast<const iovec*>(r.data);
        count_ = r.size;
        break;
      case io_opcode::recvmsg:
      case io_opcode::sendmsg: {
        const auto* m = static_cast<const msghdr*>(r.data);
        pieces_ = m != nullptr ? m->msg_iov : nullptr;
        count_ = m != nullptr ? m->msg_iovlen : 0;
        break;
      }
      default:
        single_ = iovec{r.data, r.size};
        pieces_ = &single_;
        count_ = 1;
        break;
    }
    if (pieces_ == nullptr) count_ = 0;
    for (std::size_t i = 0; i < count_; ++i) total_ += pieces_[i].iov_len;
  }
  buffers(const buffers&) = delete;
  buffers& operator=(const buffers&) = delete;

  std::size_t total() const noexcept { return total_; }

  // Copies the first n bytes of the caller's memory to `out` (n <= total()).
  template <class Out>
  void gather(std::size_t n, Out out) const {
    for (std::size_t i = 0; i < count_ && n > 0; ++i) {
      const std::size_t k = std::min(n, pieces_[i].iov_len);
      const char* p = static_cast<const char*>(pieces_[i].iov_base);
      out = std::copy(p, p + k, out);
      n -= k;
    }
  }
  // Copies n bytes from `in` (a random-access iterator) into the caller's memory (n <= total()).
  template <class In>
  void scatter(In in, std::size_t n) const {
    for (std::size_t i = 0; i < count_ && n > 0; ++i) {
      const std::size_t k = std::min(n, pieces_[i].iov_len);
      std::copy(in, in + static_cast<std::ptrdiff_t>(k), static_cast<char*>(pieces_[i].iov_base));
      in += static_cast<std::ptrdiff_t>(k);
      n -= k;
    }
  }

 private:
  iovec single_{};
  const iovec* pieces_ = nullptr;
  std::size_t count_ = 0;
  std::size_t total_ = 0;
};

}  // namespace weft::sim::io
