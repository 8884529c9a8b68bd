// socket.cpp — creating, binding and inspecting stream sockets through the loop's driver.
#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <weft/io/socket.hpp>
#include <weft/time.hpp>

namespace weft {

namespace detail {

std::int64_t new_socket(const io_owner& owner, int family, int type, const char* what) {
  platform::io_request r;
  r.opcode = platform::io_opcode::socket;
  r.fd = family;
  r.flags = type | SOCK_CLOEXEC;
  return owner.driver(what).execute(r);
}

expected<stream_ref, std::error_code> open_socket(const char* what, int family, int type) {
  io_owner owner = io_owner::current(what);
  const std::int64_t sock = new_socket(owner, family, type, what);
  if (sock < 0) return unexpected(io_error_code(sock));
  return stream_ref(new stream_core(std::move(owner), static_cast<int>(sock), true));
}

std::int64_t set_int_option(const stream_ref& core, int level, int name, int value, const char* what) {
  if (!core || core->fd < 0) return -EBADF;
  platform::io_request r;
  r.opcode = platform::io_opcode::setsockopt;
  r.fd = core->fd;
  r.flags = level;
  r.mode = static_cast<std::uint32_t>(name);
  r.data = &value;
  r.size = sizeof value;
  return execute_control(core->owner, r, what);
}

namespace {
expected<socket_address, std::error_code> address_of(const stream_ref& core, platform::io_opcode which,
                                                     const char* what) {
  if (!core || core->fd < 0) return unexpected(io_error_code(-EBADF));
  socket_address a;
  *a.size_ptr() = socket_address::capacity();
  platform::io_request r;
  r.opcode = which;
  r.fd = core->fd;
  r.addr = a.data();
  r.addr_len = a.size_ptr();
  const std::int64_t rc = execute_control(core->owner, r, what);
  if (rc < 0) return unexpected(io_error_code(rc));
  return a;
}
}  // namespace

}  // namespace detail

template <class S>
expected<detail::stream_ref, std::error_code> basic_listener<S>::listen_on(const socket_address& at,
                                                                          const listen_options& o, const char* what) {
  if (o.backlog < 1) return unexpected(std::make_error_code(std::errc::invalid_argument));
  const int family = at.family();
  if (family != AF_INET && family != AF_INET6 && family != AF_UNIX) {
    return unexpected(detail::io_error_code(-EAFNOSUPPORT));
  }
  auto core = detail::open_socket(what, family, SOCK_STREAM);
  if (!core) return unexpected(core.error());
  if (family != AF_UNIX) {
    if (o.reuse_address) {
      if (auto rc = detail::set_int_option(*core, SOL_SOCKET, SO_REUSEADDR, 1, what); rc < 0) {
        return unexpected(detail::io_error_code(rc));
      }
    }
    if (o.reuse_port) {
      if (auto rc = detail::set_int_option(*core, SOL_SOCKET, SO_REUSEPORT, 1, what); rc < 0) {
        return unexpected(detail::io_error_code(rc));
      }
    }
  }
  platform::io_request r;
  r.opcode = platform::io_opcode::bind;
  r.fd = (*core)->fd;
  r.addr = const_cast<sockaddr*>(at.data());
  r.addr_size = at.size();
  if (auto rc = detail::execute_control((*core)->owner, r, what); rc < 0) return unexpected(detail::io_error_code(rc));
  r = platform::io_request{};
  r.opcode = platform::io_opcode::listen;
  r.fd = (*core)->fd;
  r.size = static_cast<std::size_t>(o.backlog);
  if (auto rc = detail::execute_control((*core)->owner, r, what); rc < 0) return unexpected(detail::io_error_code(rc));
  return std::move(*core);
}

template <class S>
expected<socket_address, std::error_code> basic_listener<S>::local_address() const {
  return detail::address_of(core_, platform::io_opcode::getsockname, "listener::local_address");
}

template class basic_listener<tcp_stream>;
template class basic_listener<unix_stream>;

expected<tcp_listener, std::error_code> tcp_listener::bind(const socket_address& at, const listen_options& options) {
  if (at.family() == AF_UNIX) return unexpected(detail::io_error_code(-EAFNOSUPPORT));
  auto core = listen_on(at, options, "tcp_listener::bind");
  if (!core) return unexpected(core.error());
  return tcp_listener(std::move(*core));
}

expected<unix_listener, std::error_code> unix_listener::bind(const socket_address& at, const listen_options& options) {
  if (at.family() != AF_UNIX) return unexpected(detail::io_error_code(-EAFNOSUPPORT));
  auto core = listen_on(at, options, "unix_listener::bind");
  if (!core) return unexpected(core.error());
  return unix_listener(std::move(*core));
}

expected<socket_address, std::error_code> socket_stream::local_address() const {
  return detail::address_of(core(), platform::io_opcode::getsockname, "socket_stream::local_address");
}

expected<socket_address, std::error_code> socket_stream::peer_address() const {
  return detail::address_of(core(), platform::io_opcode::getpeername, "socket_stream::peer_address");
}

expected<void, std::error_code> tcp_stream::set_nodelay(bool on) {
  if (auto rc = detail::set_int_option(core(), IPPROTO_TCP, TCP_NODELAY, on ? 1 : 0, "tcp_stream::set_nodelay"); rc < 0) {
    return unexpected(detail::io_error_code(rc));
  }
  return {};
}

task<expected<tcp_stream, std::error_code>> tcp_stream::connect(socket_address to, duration limit) {
  auto outcome = co_await timeout(limit, connect(to));
  if (!outcome) co_return unexpected(std::make_error_code(std::errc::timed_out));
  co_return std::move(*outcome);
}

expected<std::pair<unix_stream, unix_stream>, std::error_code> unix_stream::pair() {
  detail::io_owner owner = detail::io_owner::current("unix_stream::pair");
  int fds[2] = {-1, -1};
  platform::io_request r;
  r.opcode = platform::io_opcode::socketpair;
  r.fd = AF_UNIX;
  r.flags = SOCK_STREAM | SOCK_CLOEXEC;
  r.data = fds;
  const std::int64_t rc = owner.driver("unix_stream::pair").execute(r);
  if (rc < 0) return unexpected(detail::io_error_code(rc));
  return std::pair<unix_stream, unix_stream>(unix_stream(detail::stream_ref(new detail::stream_core(owner, fds[0], true))),
                                             unix_stream(detail::stream_ref(new detail::stream_core(owner, fds[1], true))));
}

}  // namespace weft
