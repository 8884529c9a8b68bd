// datagram.cpp — datagram sends and receives through staged sendmsg/recvmsg operations.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include <weft/io/datagram.hpp>
#include <weft/io/socket.hpp>

namespace weft {

namespace detail {

void datagram_op::orphaned(std::int64_t result) noexcept {
  if (opcode != platform::io_opcode::recvmsg) return;
  if (result >= 0) {
    try {
      core_->datagrams.push_back({std::vector<std::byte>(staging.get(), staging.get() + result), from()});
    } catch (...) {
      // No memory to keep it: a datagram may be lost anyway, as the network may lose it.
    }
  }
  core_->finish_read();
}

datagram_recv_leaf::datagram_recv_leaf(datagram_recv_leaf&& other) noexcept
    : core_(std::move(other.core_)),
      dst_(other.dst_),
      op_(std::exchange(other.op_, nullptr)),
      result_(other.result_),
      error_(other.error_),
      done_(other.done_) {}

bool datagram_recv_leaf::poll_ready(const waker& w) {
  if (done_) return true;
  if (op_ != nullptr) {
    if (op_->handoff.ready()) return true;
    if (!op_->waiter.will_wake(w)) op_->waiter = w;
    return false;
  }
  stream_core* core = core_.get();
  if (core == nullptr || core->fd < 0) {
    error_ = -EBADF;
    return done_ = true;
  }
  platform::driver& d = core->owner.driver("datagram_socket::recv");
  if (!core->datagrams.empty()) {
    auto& kept = core->datagrams.front();
    result_.size = std::min(kept.bytes.size(), dst_.size());
    // An empty span's data may be null, which memcpy must not get even for no bytes.
    if (result_.size > 0) std::memcpy(dst_.data(), kept.bytes.data(), result_.size);
    result_.from = kept.from;
    core->datagrams.erase(core->datagrams.begin());
    return done_ = true;
  }
  if (core->reading != nullptr) {
    core->read_waiters.add(w);
    return false;
  }
  // A zero-byte buffer still takes a datagram (and truncates it), as recvmsg does.
  op_ = new datagram_op(core_, std::min(dst_.size(), io_staging_max), platform::io_opcode::recvmsg, nullptr);
  op_->waiter = w;
  d.submit(*op_);
  core->reading = op_;
  return false;
}

expected<datagram, std::error_code> datagram_recv_leaf::await_resume() {
  if (op_ != nullptr) {
    const std::int64_t r = op_->handoff.result();
    if (r < 0) {
      error_ = core_->result_after_close(r);
    } else {
      result_.size = std::min(static_cast<std::size_t>(r), dst_.size());
      if (result_.size > 0) std::memcpy(dst_.data(), op_->staging.get(), result_.size);
      result_.from = op_->from();
    }
    std::exchange(op_, nullptr)->destroy();
    core_->finish_read();
    done_ = true;
  }
  if (error_ < 0) return unexpected(io_error_code(error_));
  return result_;
}

// Dropped after submission: orphaned() keeps a datagram that came (or comes) for the next receive.
datagram_recv_leaf::~datagram_recv_leaf() {
  datagram_op* op = std::exchange(op_, nullptr);
  if (op == nullptr) return;
  op->abandon(core_->owner.shared()->driver);
}

}  // namespace detail

datagram_socket::send_leaf datagram_socket::send_message(std::span<const std::byte> src, const socket_address* to,
                                                         const char* what) {
  if (!core_ || core_->fd < 0) return {-EBADF, detail::datagram_send_finish{}};
  if (src.size() > detail::io_staging_max) return {-EMSGSIZE, detail::datagram_send_finish{}};
  auto op = std::make_unique<detail::datagram_op>(core_, src.size(), platform::io_opcode::sendmsg, to);
  if (!src.empty()) std::memcpy(op->staging.get(), src.data(), src.size());
  return {core_->owner, std::move(op), detail::datagram_send_finish{}, what};
}

datagram_socket::send_leaf datagram_socket::send_to(std::span<const std::byte> src, const socket_address& to) {
  return send_message(src, &to, "datagram_socket::send_to");
}

datagram_socket::send_leaf datagram_socket::send(std::span<const std::byte> src) {
  return send_message(src, nullptr, "datagram_socket::send");
}

datagram_socket::connect_leaf datagram_socket::connect(const socket_address& to) {
  if (!core_ || core_->fd < 0) return {-EBADF, detail::datagram_connect_finish{}};
  auto op = std::make_unique<detail::datagram_op>(core_, 0, platform::io_opcode::connect, nullptr);
  op->as_connect(to);
  return {core_->owner, std::move(op), detail::datagram_connect_finish{}, "datagram_socket::connect"};
}

expected<socket_address, std::error_code> datagram_socket::local_address() const {
  if (!core_ || core_->fd < 0) return unexpected(detail::io_error_code(-EBADF));
  socket_address a;
  *a.size_ptr() = socket_address::capacity();
  platform::io_request r;
  r.opcode = platform::io_opcode::getsockname;
  r.fd = core_->fd;
  r.addr = a.data();
  r.addr_len = a.size_ptr();
  if (auto rc = detail::execute_control(core_->owner, r, "datagram_socket::local_address"); rc < 0) {
    return unexpected(detail::io_error_code(rc));
  }
  return a;
}

expected<detail::stream_ref, std::error_code> datagram_socket::open_bound(const socket_address* at, int family,
                                                                          const char* what) {
  auto core = detail::open_socket(what, family, SOCK_DGRAM);
  if (!core) return unexpected(core.error());
  if (at != nullptr) {
    platform::io_request r;
    r.opcode = platform::io_opcode::bind;
    r.fd = (*core)->fd;
    r.addr = const_cast<sockaddr*>(at->data());
    r.addr_size = at->size();
    if (auto rc = detail::execute_control((*core)->owner, r, what); rc < 0) return unexpected(detail::io_error_code(rc));
  }
  return std::move(*core);
}

expected<udp_socket, std::error_code> udp_socket::bind(const socket_address& at) {
  if (at.family() != AF_INET && at.family() != AF_INET6) {
    return unexpected(detail::io_error_code(-EAFNOSUPPORT));
  }
  auto core = open_bound(&at, at.family(), "udp_socket::bind");
  if (!core) return unexpected(core.error());
  return udp_socket(std::move(*core));
}

expected<unix_datagram, std::error_code> unix_datagram::bind(const socket_address& at) {
  if (at.family() != AF_UNIX) return unexpected(detail::io_error_code(-EAFNOSUPPORT));
  auto core = open_bound(&at, AF_UNIX, "unix_datagram::bind");
  if (!core) return unexpected(core.error());
  return unix_datagram(std::move(*core));
}

expected<unix_datagram, std::error_code> unix_datagram::unbound() {
  auto core = open_bound(nullptr, AF_UNIX, "unix_datagram::unbound");
  if (!core) return unexpected(core.error());
  return unix_datagram(std::move(*core));
}

}  // namespace weft
