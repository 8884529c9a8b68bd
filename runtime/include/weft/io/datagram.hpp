// weft/io/datagram.hpp — datagram sockets: UDP and Unix-domain datagrams.
//
// A socket belongs to the loop of the thread that creates it. Sends and receives are leaf
// awaitables answering expected<T, std::error_code>; a datagram larger than the receive buffer
// is truncated (as recvfrom truncates). One receive is in flight at a time: a datagram that
// arrives for a dropped receive is kept and returned by the next one, so none is lost.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <span>
#include <system_error>

#include <sys/uio.h>

#include <weft/expected.hpp>
#include <weft/io/detail/stream_core.hpp>
#include <weft/io/socket_address.hpp>

namespace weft {

struct datagram {
  std::size_t size = 0;  // bytes copied into the buffer
  socket_address from;   // the sender (unspecified for a connected socket's recv on some kinds)
};

namespace detail {
// One sendmsg or recvmsg: the message header, its one iovec and the address all live here,
// where the kernel may read or write them until the completion.
class datagram_op final : public staged_op {
 public:
  datagram_op(stream_ref core, std::size_t size, platform::io_opcode code, const socket_address* to)
      : staged_op(size), core_(std::move(core)) {
    opcode = code;
    fd = core_->fd;
    vec_ = iovec{staging.get(), size};
    if (to != nullptr) peer = *to;
    message_.msg_name = code == platform::io_opcode::recvmsg || to != nullptr ? peer.data() : nullptr;
    message_.msg_namelen = code == platform::io_opcode::recvmsg ? socket_address::capacity() : (to ? to->size() : 0);
    message_.msg_iov = &vec_;
    message_.msg_iovlen = 1;
    data = &message_;
  }
  // Where a connect points the kernel (the address lives in `peer`).
  void as_connect(const socket_address& to) {
    peer = to;
    opcode = platform::io_opcode::connect;
    addr = peer.data();
    addr_size = peer.size();
    data = nullptr;
  }
  socket_address from() const {
    return socket_address::from_raw(peer.data(), message_.msg_namelen);
  }
  socket_address peer;

 private:
  // A datagram that arrived for a dropped receive is kept for the next one.
  void orphaned(std::int64_t result) noexcept override;
  stream_ref core_;
  iovec vec_{};
  msghdr message_{};
};

class datagram_recv_leaf {
 public:
  datagram_recv_leaf(stream_ref core, std::span<std::byte> dst) noexcept : core_(std::move(core)), dst_(dst) {}
  datagram_recv_leaf(datagram_recv_leaf&& other) noexcept;
  datagram_recv_leaf(const datagram_recv_leaf&) = delete;
  datagram_recv_leaf& operator=(const datagram_recv_leaf&) = delete;
  datagram_recv_leaf& operator=(datagram_recv_leaf&&) = delete;
  ~datagram_recv_leaf();
  bool poll_ready(const waker& w);
  expected<datagram, std::error_code> await_resume();

 private:
  stream_ref core_;
  std::span<std::byte> dst_;
  datagram_op* op_ = nullptr;
  datagram result_;
  std::int64_t error_ = 0;
  bool done_ = false;
};
struct datagram_send_finish {
  expected<std::size_t, std::error_code> operator()(const datagram_op*, std::int64_t result) const {
    if (result < 0) return unexpected(io_error_code(result));
    return static_cast<std::size_t>(result);
  }
};
struct datagram_connect_finish {
  expected<void, std::error_code> operator()(const datagram_op*, std::int64_t result) const {
    if (result < 0) return unexpected(io_error_code(result));
    return {};
  }
};
}  // namespace detail

class datagram_socket {
 public:
  using send_leaf = detail::io_leaf<detail::datagram_op, detail::datagram_send_finish>;
  using connect_leaf = detail::io_leaf<detail::datagram_op, detail::datagram_connect_finish>;

  datagram_socket() = default;
  // Destroying or assigning over a socket closes it at once (detail::closing_ref).

  // Sends `src` as one datagram to `to` (at most io_staging_max bytes; larger is EMSGSIZE).
  send_leaf send_to(std::span<const std::byte> src, const socket_address& to);
  // After connect(): sends to, and receives only from, the connected peer.
  send_leaf send(std::span<const std::byte> src);
  connect_leaf connect(const socket_address& to);
  detail::datagram_recv_leaf recv_from(std::span<std::byte> dst) { return {core_, dst}; }
  detail::datagram_recv_leaf recv(std::span<std::byte> dst) { return {core_, dst}; }

  expected<socket_address, std::error_code> local_address() const;
  bool is_open() const noexcept { return core_ && core_->fd >= 0; }
  int native_handle() const noexcept { return core_ ? core_->fd : -1; }
  void close() noexcept { core_.close(); }

 protected:
  explicit datagram_socket(detail::stream_ref core) noexcept : core_(std::move(core)) {}
  static expected<detail::stream_ref, std::error_code> open_bound(const socket_address* at, int family,
                                                                  const char* what);

 private:
  send_leaf send_message(std::span<const std::byte> src, const socket_address* to, const char* what);
  detail::closing_ref core_;
};

class udp_socket : public datagram_socket {
 public:
  udp_socket() = default;
  // A UDP socket bound to `at` (port 0: a free port).
  static expected<udp_socket, std::error_code> bind(const socket_address& at);

 private:
  explicit udp_socket(detail::stream_ref core) noexcept : datagram_socket(std::move(core)) {}
};

class unix_datagram : public datagram_socket {
 public:
  unix_datagram() = default;
  // Bound to a Unix-domain path (others can send to it).
  static expected<unix_datagram, std::error_code> bind(const socket_address& at);
  // Not bound: it can send, and receive replies only after connect().
  static expected<unix_datagram, std::error_code> unbound();

 private:
  explicit unix_datagram(detail::stream_ref core) noexcept : datagram_socket(std::move(core)) {}
};

}  // namespace weft
