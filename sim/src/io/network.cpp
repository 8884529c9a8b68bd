// network.cpp — the simulated network: TCP and AF_UNIX stream connections, UDP and AF_UNIX
// datagrams, listeners, ports and socket names, on each host's loopback and between hosts over
// links (world.hpp).
//
// A stream connection is two sockets, each holding the bytes sent to it (`inbound`, at most
// stream_buffer_bytes_max). A send moves bytes into the peer's `inbound` and waits only while it
// is full; a receive takes them in order and waits only while it is empty and the stream open.
// Nothing is lost or duplicated, whatever the faults: io_short only moves fewer bytes per call,
// and io_reset ends the connection with ECONNRESET on both ends.
//
// Between hosts every message has an arrival time: a send's bytes are a segment of the peer's
// `inbound` that a receive may take once it has arrived. A receive with nothing arrived yet takes
// the next segment to arrive and completes when it does, so a receive never waits on a timer of
// its own; only a segment held by a cut or held link makes it wait, until the link opens. A
// stream's segments, and its end, arrive in the order they were sent.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <weft/platform/assert.hpp>
#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

#include "buffers.hpp"
#include "faults.hpp"
#include "world.hpp"

namespace weft::sim::io {

using platform::io_opcode;
using platform::io_request;

namespace {

bool filesystem_name(const address& a) { return a.family == AF_UNIX && !a.path.empty() && a.path[0] != '\0'; }

}  // namespace

// Keys of one host's ports and abstract names; `a.node` is resolved (node_for).
std::string world::port_key(int type, const address& a) const {
  std::string key = std::to_string(a.node) + (type == SOCK_STREAM ? "/stream/" : "/dgram/");
  if (a.family == AF_UNIX) return key + "unix/" + a.path;
  return key + (a.family == AF_INET ? "inet/" : "inet6/") + std::to_string(a.port);
}

// Whether a socket bound to `bound` answers a message sent to `to` (same host and port): the
// wildcard answers every address, a loopback binding only loopback, a network binding only that.
static bool answers(const address& bound, const address& to) {
  return bound.family == AF_UNIX || bound.wildcard || bound.loopback == to.loopback;
}

// ---- links -----------------------------------------------------------------------------------

link_conditions& world::link(std::uint32_t from, std::uint32_t to) { return links_[{from, to}]; }

bool world::link_blocked(std::uint32_t from, std::uint32_t to) {
  if (from == to) return false;
  const auto it = links_.find({from, to});
  return it != links_.end() && (it->second.cut || it->second.held);
}

bool world::link_cut(std::uint32_t from, std::uint32_t to) {
  if (from == to) return false;
  const auto it = links_.find({from, to});
  return it != links_.end() && it->second.cut;
}

instant world::arrival(std::uint32_t from, std::uint32_t to, instant after, std::optional<instant> sent) {
  const instant now = sent.value_or(platform::clock::now());
  if (after == held) return held;
  if (from == to) return std::max(now, after);
  const link_conditions& l = link(from, to);
  if (l.cut || l.held) return held;
  const auto spread = static_cast<std::uint64_t>((l.latency_max - l.latency_min).count());
  const duration latency = l.latency_min + duration(static_cast<duration::rep>(detail::fault_draw(spread + 1)));
  return std::max(now + latency, after);
}

std::uint64_t world::new_message(std::uint32_t from, std::uint32_t to, std::size_t bytes, const char* what) {
  if (from == to) return 0;
  const std::uint64_t id = ++next_message_;
  const std::string text = std::to_string(bytes) + " bytes of " + what + " to host " + std::to_string(to);
  detail::trace_message(false, id, from, text);
  return id;
}

std::size_t world::arrived(const socket& s, instant t) {
  std::size_t n = 0;
  for (const segment& g : s.segments) {
    if (g.at > t) break;
    n += g.bytes;
  }
  return n;
}

void world::consume(socket& s, std::size_t n) {
  s.inbound.erase(s.inbound.begin(), s.inbound.begin() + static_cast<std::ptrdiff_t>(n));
  while (n > 0) {
    segment& g = s.segments.front();
    const std::size_t take = std::min(n, g.bytes);
    g.bytes -= take;
    n -= take;
    if (g.bytes == 0) s.segments.pop_front();
  }
}

void world::link_opened(std::uint32_t from, std::uint32_t to) {
  std::vector<std::shared_ptr<socket>> touched;
  for (const auto& [id, weak] : sockets_) {  // by id: the latency draws keep the run's order
    std::shared_ptr<socket> s = weak.lock();
    if (s == nullptr || s->closed) continue;
    const bool from_peer = s->host == to && s->remote.node == static_cast<std::int32_t>(from);
    if (from_peer && s->reset_when_open) {
      s->reset_when_open = false;  // the crashed peer's reset gets through at last
      s->inbound.clear();
      s->segments.clear();
      peer_gone(s, ECONNRESET);
    }
    if (from_peer && s->type == SOCK_STREAM) {
      instant previous = platform::clock::now();
      for (segment& g : s->segments) {
        if (g.at == held) g.at = arrival(from, to, previous);
        previous = g.at;
      }
      if (s->inbound_eof && s->eof_at == held) s->eof_at = arrival(from, to, previous);
      s->last_arrival = s->inbound_eof ? std::max(previous, s->eof_at) : previous;
    }
    if (s->host == to && s->type == SOCK_DGRAM) {
      for (datagram& d : s->datagrams) {
        if (d.at == held && d.from.node == static_cast<std::int32_t>(from)) d.at = arrival(from, to, instant::min());
      }
      std::stable_sort(s->datagrams.begin(), s->datagrams.end(),
                       [](const datagram& a, const datagram& b) { return a.at < b.at; });
    }
    if (s->host == to || s->host == from) touched.push_back(std::move(s));
  }
  for (const std::shared_ptr<socket>& s : touched) touch(s);  // connects waiting for the link
  settle();
}

std::size_t world::reset_between(std::uint32_t a, std::uint32_t b) {
  std::size_t reset = 0;
  for (const auto& [id, weak] : sockets_) {
    const std::shared_ptr<socket> s = weak.lock();
    if (s == nullptr || s->closed || s->type != SOCK_STREAM || s->host != a) continue;
    if (s->remote.node != static_cast<std::int32_t>(b) || s->peer.expired()) continue;
    reset_connection(s);
    ++reset;
  }
  settle();
  return reset;
}

// Whether binding `key` must fail EADDRINUSE for a socket that does (or does not) share its port.
bool world::port_taken(const std::string& key, bool reuse_port) {
  const auto it = bound_.find(key);
  if (it == bound_.end()) return false;
  for (const std::weak_ptr<socket>& w : it->second) {
    const std::shared_ptr<socket> other = w.lock();
    if (other != nullptr && !other->closed && !(reuse_port && other->reuse_port)) return true;
  }
  return false;
}

void world::claim_port(const std::string& key, const std::shared_ptr<socket>& s) {
  std::vector<std::weak_ptr<socket>>& group = bound_[key];
  std::erase_if(group, [](const std::weak_ptr<socket>& w) { return w.expired(); });
  group.push_back(s);
}

void world::release_port(const std::string& key, const socket& s) {
  const auto it = bound_.find(key);
  if (it == bound_.end()) return;
  std::erase_if(it->second, [&s](const std::weak_ptr<socket>& w) { return w.expired() || w.lock().get() == &s; });
  if (it->second.empty()) bound_.erase(it);
}

// The socket a connection or datagram to `key` reaches (with `listening`, only a listener).
// Among several SO_REUSEPORT sockets the kernel's pick is drawn from the run's fault stream.
std::shared_ptr<socket> world::port_owner(const std::string& key, bool listening, const address& to) {
  const auto it = bound_.find(key);
  if (it == bound_.end()) return nullptr;
  std::vector<std::shared_ptr<socket>> candidates;
  for (const std::weak_ptr<socket>& w : it->second) {
    std::shared_ptr<socket> s = w.lock();
    if (s != nullptr && !s->closed && (!listening || s->listening) && answers(s->local, to)) {
      candidates.push_back(std::move(s));
    }
  }
  if (candidates.empty()) return nullptr;
  if (candidates.size() == 1) return candidates.front();
  return candidates[static_cast<std::size_t>(detail::fault_draw(candidates.size()))];
}

std::int64_t world::op_socket(const io_request& r) {
  const int domain = r.fd;
  const int type = r.flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  const int protocol = static_cast<int>(r.mode);
  if (domain != AF_INET && domain != AF_INET6 && domain != AF_UNIX) return -EAFNOSUPPORT;
  if (type != SOCK_STREAM && type != SOCK_DGRAM) return -ESOCKTNOSUPPORT;
  if (protocol != 0) {
    const bool inet = domain != AF_UNIX;
    const bool known = inet && ((type == SOCK_STREAM && protocol == IPPROTO_TCP) ||
                                (type == SOCK_DGRAM && protocol == IPPROTO_UDP));
    if (!known) return -EPROTONOSUPPORT;
  }
  if (here().fds.size() >= open_fds_max) return -EMFILE;
  return allocate_fd(descriptor{nullptr, make_socket(domain, type)});
}

std::shared_ptr<socket> world::make_socket(int domain, int type) {
  auto s = std::make_shared<socket>();
  s->id = ++next_socket_id_;
  s->host = here_id();
  s->domain = domain;
  s->type = type;
  s->local.family = domain;
  s->local.wildcard = domain != AF_UNIX;  // getsockname of an unbound socket: 0.0.0.0:0
  s->local.node = static_cast<std::int32_t>(here_id());
  s->remote.family = domain;
  s->remote.node = s->local.node;
  register_socket(s);
  return s;
}

// Two unnamed AF_UNIX sockets connected to each other.
std::int64_t world::op_socketpair(int domain, int flags, int* fds) {
  const int type = flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fds == nullptr) return -EFAULT;
  if (domain != AF_UNIX) return -EOPNOTSUPP;
  if (type != SOCK_STREAM && type != SOCK_DGRAM) return -ESOCKTNOSUPPORT;
  if (here().fds.size() + 2 > open_fds_max) return -EMFILE;
  const std::shared_ptr<socket> a = make_socket(domain, type);
  const std::shared_ptr<socket> b = make_socket(domain, type);
  a->connected = b->connected = true;
  if (type == SOCK_STREAM) {
    a->peer = b;
    b->peer = a;
  } else {
    // Unnamed datagram ends reach each other through a name only the pair knows.
    a->local.path = std::string(1, '\0') + "socketpair-" + std::to_string(a->id);
    b->local.path = std::string(1, '\0') + "socketpair-" + std::to_string(b->id);
    claim_port(port_key(type, a->local), a);
    claim_port(port_key(type, b->local), b);
    a->bound = b->bound = true;
    a->remote = b->local;
    b->remote = a->local;
  }
  fds[0] = allocate_fd(descriptor{nullptr, a});
  fds[1] = allocate_fd(descriptor{nullptr, b});
  return 0;
}

// A pipe is a stream socket pair whose ends each go one way: fds[0] only reads, fds[1] only
// writes (a write to the read end fails EPIPE, a read of the write end sees the end, where Linux
// would answer EBADF).
std::int64_t world::op_pipe(int* fds) {
  if (const std::int64_t rc = op_socketpair(AF_UNIX, SOCK_STREAM, fds); rc != 0) return rc;
  (void)op_shutdown(lookup(fds[0])->sock, SHUT_WR);
  (void)op_shutdown(lookup(fds[1])->sock, SHUT_RD);
  return 0;
}

int world::bind_to(const std::shared_ptr<socket>& s, address a) {
  if (s->bound) return -EINVAL;
  if (a.family != AF_UNIX && a.port == 0) {
    s->local.wildcard = a.wildcard;
    return bind_ephemeral(s);
  }
  if (filesystem_name(a)) {
    if (a.path.size() > path_bytes_max) return -ENAMETOOLONG;
    if (here().files.count(a.path) != 0) return -EADDRINUSE;  // any name, a file's or a socket's
    here().files[a.path] = fs_node{nullptr, s};
  } else if (a.family != AF_UNIX || !a.path.empty()) {
    const std::string key = port_key(s->type, a);
    if (port_taken(key, s->reuse_port)) return -EADDRINUSE;
    claim_port(key, s);
  }
  s->local = std::move(a);
  s->bound = true;
  return 0;
}

int world::bind_ephemeral(const std::shared_ptr<socket>& s) {
  if (s->domain == AF_UNIX) return 0;  // an unnamed AF_UNIX socket stays unnamed
  constexpr std::uint32_t ports = ephemeral_port_last - ephemeral_port_first + 1;
  for (std::uint32_t tried = 0; tried < ports; ++tried) {
    const std::uint16_t port = next_ephemeral_;
    next_ephemeral_ = port == ephemeral_port_last ? ephemeral_port_first : static_cast<std::uint16_t>(port + 1);
    address a;
    a.family = s->domain;
    a.port = port;
    a.wildcard = s->local.wildcard;
    a.loopback = s->local.loopback;
    a.node = s->local.node;
    const std::string key = port_key(s->type, a);
    if (port_taken(key, false)) continue;  // an ephemeral port is never shared
    claim_port(key, s);
    s->local = a;
    s->bound = true;
    return 0;
  }
  return -EADDRINUSE;
}

std::shared_ptr<socket> world::find_target(int type, const address& a, int& error) {
  error = 0;
  if (!known_host(a.node)) {
    error = -ENETUNREACH;  // no such host
    return nullptr;
  }
  if (filesystem_name(a)) {
    const auto it = here().files.find(a.path);
    if (it == here().files.end()) {
      error = -ENOENT;
      return nullptr;
    }
    std::shared_ptr<socket> s = it->second.sock.lock();
    if (s == nullptr || s->type != type) error = -ECONNREFUSED;
    return error == 0 ? s : nullptr;
  }
  std::shared_ptr<socket> s = port_owner(port_key(type, a), type == SOCK_STREAM, a);
  if (s == nullptr) error = -ECONNREFUSED;
  return s;
}

std::int64_t world::op_bind(const std::shared_ptr<socket>& s, const io_request& r) {
  address a;
  if (const int e = parse_address(r.addr, r.addr_size, s->domain, address_use::bind, a); e != 0) return e;
  if (a.node != own_node && a.node != static_cast<std::int32_t>(here_id())) return -EADDRNOTAVAIL;  // another host's
  a.node = static_cast<std::int32_t>(here_id());
  return bind_to(s, std::move(a));
}

std::int64_t world::op_listen(const std::shared_ptr<socket>& s, const io_request& r) {
  if (s->type != SOCK_STREAM) return -EOPNOTSUPP;
  if (s->connected) return -EINVAL;
  if (!s->bound) {
    if (s->domain == AF_UNIX) return -EINVAL;
    if (const int e = bind_ephemeral(s); e != 0) return e;
  }
  // As Linux: a backlog above somaxconn (or negative, as unsigned) is that maximum.
  const auto asked = static_cast<unsigned int>(static_cast<int>(r.size));
  s->backlog = std::min<std::size_t>(asked, listen_backlog_max);
  s->listening = true;
  touch(s);
  return 0;
}

std::int64_t world::op_setsockopt(const io_request& r) {
  descriptor* d = lookup(r.fd);
  if (d == nullptr) return -EBADF;
  if (d->sock == nullptr) return -ENOTSOCK;
  const int level = r.flags;
  const int name = static_cast<int>(r.mode);
  if (r.data == nullptr || r.size < sizeof(int)) return -EINVAL;
  // SO_REUSEPORT lets sockets that all set it share a port. The others are accepted and change
  // nothing: the loopback network has no TIME_WAIT to reuse and no Nagle delay.
  if (level == SOL_SOCKET && name == SO_REUSEPORT) {
    if (d->sock->bound) return 0;  // Linux keeps the binding's sharing as it was
    int on = 0;
    std::memcpy(&on, r.data, sizeof on);
    d->sock->reuse_port = on != 0;
    return 0;
  }
  if (level == SOL_SOCKET && (name == SO_REUSEADDR || name == SO_KEEPALIVE)) return 0;
  if (level == IPPROTO_TCP && name == TCP_NODELAY && d->sock->type == SOCK_STREAM && d->sock->domain != AF_UNIX) return 0;
  if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY && d->sock->domain == AF_INET6) return 0;
  return -ENOPROTOOPT;
}

std::int64_t world::op_getsockopt(const io_request& r) {
  descriptor* d = lookup(r.fd);
  if (d == nullptr) return -EBADF;
  if (d->sock == nullptr) return -ENOTSOCK;
  if (r.data == nullptr || r.size < sizeof(int)) return -EINVAL;
  int value = 0;
  if (r.flags == SOL_SOCKET && static_cast<int>(r.mode) == SO_ERROR) {
    value = std::exchange(d->sock->pending_error, 0);
  } else if (r.flags == SOL_SOCKET && static_cast<int>(r.mode) == SO_TYPE) {
    value = d->sock->type;
  } else {
    return -ENOPROTOOPT;
  }
  std::memcpy(r.data, &value, sizeof value);
  if (r.addr_len != nullptr) *r.addr_len = sizeof value;
  return 0;
}

std::int64_t world::op_name(socket& s, const io_request& r, bool peer) {
  if (r.addr_len == nullptr) return -EFAULT;
  if (peer && !s.connected) return -ENOTCONN;
  write_address(peer ? s.remote : s.local, r.addr, r.addr_len);
  return 0;
}

world::step world::op_connect(const std::shared_ptr<socket>& s, const io_request& r) {
  if (s->listening) return finished(-EINVAL);
  if (s->type == SOCK_STREAM && s->connected) return finished(-EISCONN);
  address a;
  if (const int e = parse_address(r.addr, r.addr_size, s->domain, address_use::connect, a); e != 0) return finished(e);
  if (a.wildcard) {
    a.wildcard = false;  // connecting to 0.0.0.0 / :: reaches loopback
    a.loopback = true;
  }
  a.node = node_for(a);
  const auto to_host = static_cast<std::uint32_t>(a.node);
  // A SYN across a link that holds it, or whose answer would be held, waits for the link.
  if (s->type == SOCK_STREAM && known_host(a.node) &&
      (link_blocked(s->host, to_host) || link_blocked(to_host, s->host))) {
    return wait_in(s, &socket::connectors);
  }
  int error = 0;
  const std::shared_ptr<socket> target = find_target(s->type, a, error);
  if (s->type == SOCK_DGRAM) {
    // A datagram socket only remembers its default peer; AF_UNIX names must exist.
    if (s->domain == AF_UNIX && error != 0) return finished(error);
    if (!s->bound) {
      if (const int e = bind_ephemeral(s); e != 0) return finished(-EADDRNOTAVAIL);
    }
    s->remote = a;
    s->connected = true;
    return finished(0);
  }
  // The refusal, like the acceptance, comes back after a round trip.
  const instant syn_at = arrival(s->host, to_host, instant::min());
  if (target == nullptr || !target->listening) {
    const int refused = error != 0 && error != -ECONNREFUSED ? error : -ECONNREFUSED;
    return finished(refused, error == -ENETUNREACH || syn_at == held ? instant::min()
                                                                    : arrival(to_host, s->host, syn_at, syn_at));
  }
  if (target->accept_queue.size() > target->backlog) return wait_in(target, &socket::connectors);
  if (!s->bound) {
    s->local.loopback = a.loopback;
    if (const int e = bind_ephemeral(s); e != 0) return finished(-EADDRNOTAVAIL);
  }
  auto server_end = std::make_shared<socket>();
  server_end->id = ++next_socket_id_;
  server_end->host = to_host;
  server_end->domain = s->domain;
  server_end->type = SOCK_STREAM;
  server_end->local = target->local;
  server_end->local.wildcard = false;
  server_end->local.loopback = a.loopback;
  server_end->remote = s->local;
  server_end->remote.wildcard = false;
  server_end->remote.loopback = a.loopback;
  server_end->connected = true;
  server_end->connected_at = syn_at;
  server_end->peer = s;
  register_socket(server_end);
  s->peer = server_end;
  s->remote = server_end->local;
  s->connected = true;
  target->accept_queue.push_back(std::move(server_end));
  touch(target);
  return finished(0, arrival(to_host, s->host, syn_at, syn_at));
}

world::step world::op_accept(const std::shared_ptr<socket>& s, const io_request& r) {
  if (!s->listening) return finished(-EINVAL);
  if (s->accept_queue.empty()) return wait_in(s, &socket::readers);
  std::shared_ptr<socket> conn = s->accept_queue.front();
  const int fd = allocate_fd(descriptor{nullptr, conn});
  if (fd < 0) return finished(fd);
  s->accept_queue.pop_front();
  if (r.addr_len != nullptr) write_address(conn->remote, r.addr, r.addr_len);
  touch(s);  // a connect waiting for backlog room may go now
  return finished(fd, conn->connected_at);  // an accept that waits for the SYN completes as it arrives
}

void world::reset_connection(const std::shared_ptr<socket>& s) {
  const std::shared_ptr<socket> other = s->peer.lock();
  for (const std::shared_ptr<socket>& end : {s, other}) {
    if (end == nullptr) continue;
    peer_gone(end, ECONNRESET);
    end->inbound.clear();  // a reset discards what was not read
    end->segments.clear();
  }
}

// The other end of `s` is gone (closed: its end of stream arrives after what it sent; or the
// connection reset with `error`, known at once).
void world::peer_gone(const std::shared_ptr<socket>& s, int error) {
  s->peer.reset();
  if (!s->inbound_eof) {
    s->inbound_eof = true;
    s->eof_at = arrival(static_cast<std::uint32_t>(s->remote.node), s->host, s->last_arrival);
    s->last_arrival = s->eof_at;
  }
  s->peer_stopped_reading = true;
  if (error != 0) s->pending_error = error;
  touch(s);
}

// When `s` can next be read (bytes, or the end of the stream) as seen now: now, a later arrival,
// or nothing known (it waits: nothing sent, or held by a link).
std::optional<instant> world::readable_at(const socket& s) {
  const instant now = platform::clock::now();
  if (s.read_shut || arrived(s, now) > 0) return now;
  if (!s.segments.empty()) return s.segments.front().at == held ? std::nullopt : std::optional(s.segments.front().at);
  if (s.inbound_eof && s.eof_at != held) return std::max(now, s.eof_at);
  return std::nullopt;
}

world::step world::op_stream_receive(const std::shared_ptr<socket>& s, const io_request& r) {
  if (!s->connected) return finished(-ENOTCONN);
  if (s->pending_error != 0) return on_channel(-std::exchange(s->pending_error, 0), *s, direction::in);
  const buffers b(r);
  if (r.opcode == io_opcode::recvmsg) {
    auto* m = static_cast<msghdr*>(r.data);
    m->msg_namelen = 0;
    m->msg_controllen = 0;
    m->msg_flags = 0;
  }
  if (b.total() == 0) return on_channel(0, *s, direction::in);
  const std::optional<instant> at = readable_at(*s);
  if (!at) return wait_in(s, &socket::readers);
  const std::size_t ready = arrived(*s, *at);
  if (ready == 0) return on_channel(0, *s, direction::in, *at);  // the end of the stream
  if (!s->peer.expired() && strike(platform::fault::io_reset)) {
    reset_connection(s);
    return on_channel(-std::exchange(s->pending_error, 0), *s, direction::in);
  }
  const std::size_t n = maybe_short(std::min(b.total(), ready));
  b.scatter(s->inbound.begin(), n);
  const std::uint64_t message = s->segments.front().message;
  consume(*s, n);
  touch(s->peer.lock());  // its sends waiting for room may go now
  touch(s);               // and its polls for writability
  step out = on_channel(static_cast<std::int64_t>(n), *s, direction::in, *at);
  out.message = message;
  return out;
}

world::step world::op_stream_send(const std::shared_ptr<socket>& s, const io_request& r) {
  if (!s->connected) return finished(-ENOTCONN);
  if (s->pending_error != 0) return on_channel(-std::exchange(s->pending_error, 0), *s, direction::out);
  const std::shared_ptr<socket> peer = s->peer.lock();
  const buffers b(r);
  if (s->reset_when_open && !s->write_shut) {
    // Nothing tells this end that its peer is gone: the bytes leave and are never answered.
    return on_channel(static_cast<std::int64_t>(std::min(b.total(), stream_buffer_bytes_max)), *s, direction::out);
  }
  if (s->write_shut || s->peer_stopped_reading || peer == nullptr) return on_channel(-EPIPE, *s, direction::out);
  if (b.total() == 0) return on_channel(0, *s, direction::out);
  const std::size_t room = stream_buffer_bytes_max - std::min(stream_buffer_bytes_max, peer->inbound.size());
  if (room == 0) return wait_in(s, &socket::writers);
  if (strike(platform::fault::io_reset)) {
    reset_connection(s);
    return on_channel(-std::exchange(s->pending_error, 0), *s, direction::out);
  }
  const std::size_t n = maybe_short(std::min(b.total(), room));
  b.gather(n, std::back_inserter(peer->inbound));
  const instant at = arrival(s->host, peer->host, peer->last_arrival);
  peer->last_arrival = at;
  if (s->host == peer->host && !peer->segments.empty() && peer->segments.back().at == at) {
    peer->segments.back().bytes += n;
  } else {
    peer->segments.push_back(segment{n, at, new_message(s->host, peer->host, n, "stream")});
  }
  touch(peer);
  return on_channel(static_cast<std::int64_t>(n), *s, direction::out);
}

world::step world::op_datagram_send(const std::shared_ptr<socket>& s, const io_request& r) {
  address to;
  const msghdr* m = r.opcode == io_opcode::sendmsg ? static_cast<const msghdr*>(r.data) : nullptr;
  if (m != nullptr && m->msg_name != nullptr) {
    if (const int e = parse_address(static_cast<const sockaddr*>(m->msg_name), m->msg_namelen, s->domain,
                                    address_use::send, to);
        e != 0) {
      return finished(e);
    }
    if (to.wildcard) {
      to.wildcard = false;  // sending to 0.0.0.0 / :: reaches loopback
      to.loopback = true;
    }
    to.node = node_for(to);
  } else if (s->connected) {
    to = s->remote;
  } else {
    return finished(s->domain == AF_UNIX ? -ENOTCONN : -EDESTADDRREQ);
  }
  if (s->write_shut) return finished(-EPIPE);
  const buffers b(r);
  if (b.total() > datagram_bytes_max) return finished(-EMSGSIZE);
  if (!s->bound) {
    if (const int e = bind_ephemeral(s); e != 0) return finished(-EADDRNOTAVAIL);
  }
  int error = 0;
  const std::shared_ptr<socket> target = find_target(SOCK_DGRAM, to, error);
  const auto sent = static_cast<std::int64_t>(b.total());
  const bool unix_domain = s->domain == AF_UNIX;
  if (error == -ENETUNREACH) return finished(error);
  datagram d;
  d.from = s->local;
  d.from.wildcard = false;
  d.from.loopback = to.loopback;
  // UDP loses what nobody receives, or a cut link; an AF_UNIX sender is told.
  if (target == nullptr) return finished(unix_domain ? error : sent);
  if (target->connected && !target->remote.same_endpoint(d.from)) return finished(unix_domain ? -EPERM : sent);
  const bool across = s->host != target->host;
  if (link_cut(s->host, target->host) || (across && strike(platform::fault::net_loss))) return finished(sent);
  if (target->datagrams.size() >= datagram_queue_max) {
    return unix_domain ? wait_in(target, &socket::senders) : finished(sent);
  }
  d.bytes.reserve(b.total());
  b.gather(b.total(), std::back_inserter(d.bytes));
  // A duplicate is a second datagram with the same bytes and its own latency.
  const int copies = across && strike(platform::fault::net_duplicate) ? 2 : 1;
  for (int copy = 0; copy < copies; ++copy) {
    datagram one = copy + 1 < copies ? d : std::move(d);
    one.at = arrival(s->host, target->host, instant::min());
    one.message = new_message(s->host, target->host, one.bytes.size(), "datagram");
    // Datagrams are read in the order they arrive: a later one may overtake.
    const auto after = std::upper_bound(target->datagrams.begin(), target->datagrams.end(), one.at,
                                        [](instant at, const datagram& queued) { return at < queued.at; });
    target->datagrams.insert(after, std::move(one));
  }
  touch(target);
  return finished(sent);
}

world::step world::op_datagram_receive(const std::shared_ptr<socket>& s, const io_request& r) {
  if (s->datagrams.empty() || s->datagrams.front().at == held) {
    if (s->read_shut) return finished(0);
    return wait_in(s, &socket::readers);
  }
  const instant at = std::max(platform::clock::now(), s->datagrams.front().at);
  const buffers b(r);
  datagram d = std::move(s->datagrams.front());
  s->datagrams.pop_front();
  const std::size_t n = std::min(b.total(), d.bytes.size());
  b.scatter(d.bytes.begin(), n);
  if (r.opcode == io_opcode::recvmsg) {
    auto* m = static_cast<msghdr*>(r.data);
    if (m->msg_name != nullptr) {
      write_address(d.from, static_cast<sockaddr*>(m->msg_name), &m->msg_namelen);
    } else {
      m->msg_namelen = 0;
    }
    m->msg_controllen = 0;
    m->msg_flags = n < d.bytes.size() ? MSG_TRUNC : 0;
  }
  touch(s);  // an AF_UNIX sender waiting for room may go now
  const bool whole = (r.flags & MSG_TRUNC) != 0;  // recv(MSG_TRUNC) answers the datagram's length
  step out = finished(static_cast<std::int64_t>(whole ? d.bytes.size() : n), at);
  out.message = d.message;
  return out;
}

world::step world::op_poll(const std::shared_ptr<socket>& s, const io_request& r) {
  const std::shared_ptr<socket> peer = s->peer.lock();
  const instant now = platform::clock::now();
  int ready = 0;
  // Readable later (a message on its way from another host): ready then, if nothing is before.
  std::optional<instant> in_at;
  if (s->listening) {
    if (!s->accept_queue.empty()) in_at = std::max(now, s->accept_queue.front()->connected_at);
  } else if (s->type == SOCK_DGRAM) {
    if (!s->datagrams.empty() && s->datagrams.front().at != held) in_at = std::max(now, s->datagrams.front().at);
    ready |= POLLOUT;
  } else if (s->connected) {
    in_at = readable_at(*s);
    if (peer == nullptr || s->write_shut || peer->inbound.size() < stream_buffer_bytes_max) ready |= POLLOUT;
    if (s->pending_error != 0) ready |= POLLERR;
    if (s->inbound_eof && s->eof_at <= now && (peer == nullptr || s->write_shut)) ready |= POLLHUP;
  }
  ready &= r.flags | POLLERR | POLLHUP;
  if (ready == 0 && in_at && (r.flags & POLLIN) != 0) return finished(POLLIN, *in_at);
  if (in_at && *in_at <= now) ready |= r.flags & POLLIN;
  if (ready == 0) return wait_in(s, &socket::pollers);
  return finished(ready);
}

std::int64_t world::op_shutdown(const std::shared_ptr<socket>& s, int how) {
  if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) return -EINVAL;
  if (!s->connected) return -ENOTCONN;
  const std::shared_ptr<socket> peer = s->peer.lock();
  if (how != SHUT_WR) {
    s->read_shut = true;
    if (peer != nullptr) peer->peer_stopped_reading = true;
  }
  if (how != SHUT_RD && !s->write_shut) {
    s->write_shut = true;
    if (peer != nullptr && !peer->inbound_eof) {
      peer->inbound_eof = true;
      peer->eof_at = arrival(s->host, peer->host, peer->last_arrival);
      peer->last_arrival = peer->eof_at;
    }
  }
  touch(s);
  touch(peer);
  return 0;
}

void world::fail_all(std::deque<pending_op>& queue, std::int64_t result) {
  while (!queue.empty()) {
    pending_op p = std::move(queue.front());
    queue.pop_front();
    finish(p, finished(result));
  }
}

void world::close_socket(const std::shared_ptr<socket>& s) {
  s->closed = true;
  if (s->bound && !filesystem_name(s->local)) {
    release_port(port_key(s->type, s->local), *s);
  }
  // A filesystem name stays until unlinked, as on Linux; connecting to it is refused.
  if (const std::shared_ptr<socket> peer = s->peer.lock()) peer_gone(peer, 0);
  s->peer.reset();
  // Connections nobody accepted are reset; connects still waiting for room are refused.
  for (const std::shared_ptr<socket>& conn : s->accept_queue) {
    if (const std::shared_ptr<socket> client = conn->peer.lock()) peer_gone(client, ECONNRESET);
  }
  s->accept_queue.clear();
  fail_all(s->connectors, -ECONNREFUSED);
  fail_all(s->senders, -ECONNREFUSED);
  // Operations still waiting on the socket itself end with EBADF: its fd is gone.
  fail_all(s->readers, -EBADF);
  fail_all(s->writers, -EBADF);
  fail_all(s->pollers, -EBADF);
}

}  // namespace weft::sim::io
