// weft/io/socket.hpp — stream sockets: TCP and Unix-domain listeners and streams.
//
// Listeners and streams belong to the loop of the thread that creates them (inside a task or a
// driven loop); every call must come from that thread (usage_error otherwise), and tasks never
// move, so a connection is served where it was accepted. A runtime that wants one listener per
// worker binds each worker's own listener with reuse_port (SO_REUSEPORT): the kernel spreads the
// connections among them.
//
// Every fallible call answers expected<T, std::error_code> with the OS's error: a port in use is
// EADDRINUSE, a refused connection ECONNREFUSED, a reset peer ECONNRESET, a closed object EBADF.
// accept() and connect() are leaf awaitables (they compose with timeout()); a dropped accept
// loses no connection (the next accept returns it).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <system_error>

#include <weft/expected.hpp>
#include <weft/io/detail/io_op.hpp>
#include <weft/io/socket_address.hpp>
#include <weft/io/stream.hpp>
#include <weft/platform/clock.hpp>
#include <weft/task.hpp>

namespace weft {

namespace detail {
struct socket_factory;
}

struct listen_options {
  bool reuse_address = true;  // SO_REUSEADDR (TCP)
  bool reuse_port = false;    // SO_REUSEPORT: several listeners (one per worker) on one port
  int backlog = 1024;         // 1 to SOMAXCONN-clamped by the kernel; <1 is invalid_argument
};

// A connected stream socket (TCP or Unix).
class socket_stream : public byte_stream {
 public:
  socket_stream() = default;

  // Shuts down one or both directions (SHUT_RD, SHUT_WR, SHUT_RDWR); the peer then reads end of
  // stream. A leaf awaitable.
  auto shutdown(int how = 2 /* SHUT_RDWR */);
  expected<socket_address, std::error_code> local_address() const;
  expected<socket_address, std::error_code> peer_address() const;

 protected:
  friend struct detail::socket_factory;
  explicit socket_stream(detail::stream_ref core) noexcept : byte_stream(std::move(core)) {}
};

class tcp_stream : public socket_stream {
 public:
  tcp_stream() = default;
  // A leaf awaitable answering expected<tcp_stream, std::error_code>.
  static auto connect(const socket_address& to);
  // connect(), given up after `limit` with std::errc::timed_out.
  static task<expected<tcp_stream, std::error_code>> connect(socket_address to, duration limit);
  // TCP_NODELAY: send small writes at once instead of coalescing them.
  expected<void, std::error_code> set_nodelay(bool on);

 private:
  friend struct detail::socket_factory;
  explicit tcp_stream(detail::stream_ref core) noexcept : socket_stream(std::move(core)) {}
};

class unix_stream : public socket_stream {
 public:
  unix_stream() = default;
  static auto connect(const socket_address& to);
  // A connected pair (socketpair), both owned by the current loop.
  static expected<std::pair<unix_stream, unix_stream>, std::error_code> pair();

 private:
  friend struct detail::socket_factory;
  explicit unix_stream(detail::stream_ref core) noexcept : socket_stream(std::move(core)) {}
};

namespace detail {
// Builds listeners and streams; the one place their private constructors are called.
struct socket_factory {
  template <class S>
  static S make(stream_ref core) {
    return S(std::move(core));
  }
};

// A new close-on-exec socket descriptor through the owner's driver, or -errno.
std::int64_t new_socket(const io_owner& owner, int family, int type, const char* what);
// A socket for `family` and `type`, owned by the current loop.
expected<stream_ref, std::error_code> open_socket(const char* what, int family, int type);
std::int64_t set_int_option(const stream_ref& core, int level, int name, int value, const char* what);

class connect_op final : public io_op {
 public:
  connect_op(io_owner owner, int sock, const socket_address& to) : owner_(std::move(owner)), target(to) {
    opcode = platform::io_opcode::connect;
    fd = sock;
    addr = target.data();
    addr_size = target.size();
  }
  io_owner owner_;
  socket_address target;
  bool handed_over = false;

 private:
  void orphaned(std::int64_t) noexcept override { close_descriptor(owner_, fd); }
  // Made and dropped unawaited (or cancelled before its first poll): its socket is closed too.
  void never_submitted() noexcept override { close_descriptor(owner_, fd); }
};

template <class S>
struct connect_finish {
  expected<S, std::error_code> operator()(connect_op* op, std::int64_t result) const {
    if (op == nullptr) return unexpected(io_error_code(result));
    if (result < 0) {
      close_descriptor(op->owner_, op->fd);
      return unexpected(io_error_code(result));
    }
    return socket_factory::make<S>(stream_ref(new stream_core(op->owner_, op->fd, true)));
  }
};

template <class S>
io_leaf<connect_op, connect_finish<S>> connect_to(const socket_address& to, const char* what) {
  const int family = to.family();
  if (family != AF_INET && family != AF_INET6 && family != AF_UNIX) {
    return {-EAFNOSUPPORT, connect_finish<S>{}};
  }
  io_owner owner = io_owner::current(what);
  const std::int64_t sock = new_socket(owner, family, SOCK_STREAM, what);
  if (sock < 0) return {sock, connect_finish<S>{}};
  auto op = std::make_unique<connect_op>(owner, static_cast<int>(sock), to);
  return {std::move(owner), std::move(op), connect_finish<S>{}, what};
}

class accept_op final : public io_op {
 public:
  explicit accept_op(stream_ref listener) : listener_(std::move(listener)) {
    opcode = platform::io_opcode::accept;
    fd = listener_->fd;
    addr = peer.data();
    len = socket_address::capacity();
    addr_len = &len;
    flags = SOCK_CLOEXEC;
  }
  stream_ref listener_;
  socket_address peer;
  socklen_t len;

 private:
  // A connection accepted for nobody: the listener keeps it for its next accept, unless the
  // listener is closed already (nothing would ever take it).
  void orphaned(std::int64_t result) noexcept override {
    if (result < 0) return;
    if (listener_->fd < 0) {
      close_descriptor(listener_->owner, static_cast<int>(result));
      return;
    }
    try {
      listener_->accepted.push_back(static_cast<int>(result));
    } catch (...) {
      close_descriptor(listener_->owner, static_cast<int>(result));
    }
  }
};

template <class S>
struct accept_finish {
  stream_ref listener;
  expected<S, std::error_code> operator()(accept_op*, std::int64_t result) const {
    result = listener->result_after_close(result);
    if (result < 0) return unexpected(io_error_code(result));
    return socket_factory::make<S>(stream_ref(new stream_core(listener->owner, static_cast<int>(result), true)));
  }
};
}  // namespace detail

template <class S>
class basic_listener {
 public:
  basic_listener() = default;
  // Destroying or assigning over a listener closes it at once, with the connections it kept
  // (detail::closing_ref; a dropped accept still in flight is cancelled).
  // A leaf awaitable answering expected<S, std::error_code>.
  detail::io_leaf<detail::accept_op, detail::accept_finish<S>> accept() {
    if (!core_ || core_->fd < 0) return {-EBADF, detail::accept_finish<S>{core_}};
    detail::io_owner owner = core_->owner;
    (void)owner.driver("listener::accept");  // the thread check
    if (!core_->accepted.empty()) {  // kept for a dropped accept: handed out the same way
      auto done = std::make_unique<detail::accept_op>(core_);
      done->complete_now(core_->accepted.front());
      core_->accepted.erase(core_->accepted.begin());
      return {std::move(owner), std::move(done), detail::accept_finish<S>{core_}};
    }
    return {std::move(owner), std::make_unique<detail::accept_op>(core_), detail::accept_finish<S>{core_},
            "listener::accept"};
  }
  expected<socket_address, std::error_code> local_address() const;
  bool is_open() const noexcept { return core_ && core_->fd >= 0; }
  int native_handle() const noexcept { return core_ ? core_->fd : -1; }
  void close() noexcept { core_.close(); }

 protected:
  static expected<detail::stream_ref, std::error_code> listen_on(const socket_address& at, const listen_options& o,
                                                                  const char* what);
  explicit basic_listener(detail::stream_ref core) noexcept : core_(std::move(core)) {}
  detail::closing_ref core_;
};

class tcp_listener : public basic_listener<tcp_stream> {
 public:
  tcp_listener() = default;
  // socket + SO_REUSEADDR/SO_REUSEPORT + bind + listen. Port 0 picks a free port (local_address
  // tells which).
  static expected<tcp_listener, std::error_code> bind(const socket_address& at, const listen_options& options = {});

 private:
  explicit tcp_listener(detail::stream_ref core) noexcept : basic_listener(std::move(core)) {}
};

class unix_listener : public basic_listener<unix_stream> {
 public:
  unix_listener() = default;
  static expected<unix_listener, std::error_code> bind(const socket_address& at, const listen_options& options = {});

 private:
  explicit unix_listener(detail::stream_ref core) noexcept : basic_listener(std::move(core)) {}
};

// ---- inline definitions ----------------------------------------------------------------------

namespace detail {
class shutdown_op final : public io_op {
 public:
  explicit shutdown_op(stream_ref core, int how) : core_(std::move(core)) {
    opcode = platform::io_opcode::shutdown;
    fd = core_->fd;
    flags = how;
  }

 private:
  stream_ref core_;
};
struct void_finish {
  expected<void, std::error_code> operator()(const void*, std::int64_t result) const {
    if (result < 0) return unexpected(io_error_code(result));
    return {};
  }
};
}  // namespace detail

inline auto socket_stream::shutdown(int how) {
  using leaf = detail::io_leaf<detail::shutdown_op, detail::void_finish>;
  const detail::stream_ref& c = core();
  if (!c || c->fd < 0) return leaf(-EBADF, detail::void_finish{});
  if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) return leaf(-EINVAL, detail::void_finish{});
  return leaf(c->owner, std::make_unique<detail::shutdown_op>(c, how), detail::void_finish{}, "socket_stream::shutdown");
}

inline auto tcp_stream::connect(const socket_address& to) {
  if (to.family() == AF_UNIX) return detail::io_leaf<detail::connect_op, detail::connect_finish<tcp_stream>>(-EAFNOSUPPORT, {});
  return detail::connect_to<tcp_stream>(to, "tcp_stream::connect");
}

inline auto unix_stream::connect(const socket_address& to) {
  if (to.family() != AF_UNIX) return detail::io_leaf<detail::connect_op, detail::connect_finish<unix_stream>>(-EAFNOSUPPORT, {});
  return detail::connect_to<unix_stream>(to, "unix_stream::connect");
}

}  // namespace weft
