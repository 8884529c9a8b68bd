// world.cpp — the simulated kernel's core: fds, dispatch by opcode, waiting queues, scheduling
// completions (world.hpp).
#include "world.hpp"

#include "faults.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <poll.h>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

namespace weft::sim::io {

using platform::io_opcode;
using platform::io_operation;
using platform::io_request;

world::world() { act_on(0); }

// Nothing here is completed or woken: a run that ends with operations still waiting (a deadlock,
// an assertion) has abandoned the threads that own them. The containers go first, while the byte
// count their files give back to is still alive.
world::~world() {
  // A waiting operation names its socket, and may wait in that socket's own queue: empty the
  // queues so no socket keeps itself alive.
  for (const auto& [id, place] : waiting_) ((*place.where).*(place.queue)).clear();
  waiting_.clear();
  held_.clear();
  dirty_.clear();
  to_wake_.clear();
  for (host_state& h : hosts_) h.fds.clear();
  bound_.clear();
  sockets_.clear();
  for (host_state& h : hosts_) h.files.clear();
}

world::host_state& world::host(std::uint32_t h) {
  WEFT_ASSERT(h < hosts_max);
  while (hosts_.size() <= h) hosts_.emplace_back();
  return hosts_[h];
}

world::host_state* world::caller() {
  const detail::host_tag tag = detail::current_host();
  act_on(tag.host);
  return tag.incarnation == here().incarnation ? here_ : nullptr;
}

void world::register_socket(const std::shared_ptr<socket>& s) {
  if (sockets_.size() >= sockets_prune_at_) {
    std::erase_if(sockets_, [](const auto& entry) { return entry.second.expired(); });
    sockets_prune_at_ = std::max<std::size_t>(64, sockets_.size() * 2);
  }
  sockets_.emplace(s->id, s);
}

world::descriptor* world::lookup(int fd) {
  const auto it = here().fds.find(fd);
  return it == here().fds.end() ? nullptr : &it->second;
}

int world::allocate_fd(descriptor d) {
  if (here().fds.size() >= open_fds_max) return -EMFILE;
  int fd = first_fd;
  for (const auto& [used, unused] : here().fds) {  // ascending: the first gap is the lowest free fd
    if (used < fd) continue;
    if (used != fd) break;
    ++fd;
  }
  here().fds.emplace(fd, std::move(d));
  return fd;
}

void world::touch(const std::shared_ptr<socket>& s) {
  if (s == nullptr || s->dirty) return;
  s->dirty = true;
  dirty_.push_back(s);
}

void world::submit(const std::shared_ptr<endpoint>& owner, io_operation& op) {
  owner->submitted();
  held_.insert(&op);
  const bool alive = caller() != nullptr;
  pending_op p{++next_op_id_, here_id(), &op, owner, nullptr};
  op.driver_slot = static_cast<std::uintptr_t>(p.id);
  const step s = alive ? attempt(op, &p) : finished(-EIO);
  if (s.done) {
    finish(p, s);
  } else {
    enqueue(std::move(p), s);
  }
  settle();
}

void world::delivered(const io_operation& op) {
  const bool was_held = held_.erase(&op) == 1;
  WEFT_ASSERT(was_held);
}

std::int64_t world::execute(const io_request& r) {
  if (caller() == nullptr) return -EIO;
  const step s = attempt(r, nullptr);
  settle();
  return s.done ? s.result : -EAGAIN;
}

void world::enqueue(pending_op p, const step& s) {
  WEFT_ASSERT(s.where != nullptr && s.queue != nullptr);
  waiting_[p.id] = waiting_place{s.where, s.queue, p.owner.get(), p.host};
  ((*s.where).*s.queue).push_back(std::move(p));
}

void world::finish(pending_op& p, const step& s) {
  WEFT_ASSERT(s.done);
  waiting_.erase(p.id);
  instant due = std::max(platform::clock::now() + completion_latency(), s.not_before);
  channel_id channel = no_channel;
  if (s.channel_of != nullptr) {
    // A stream direction's completions never overtake each other: a later one is due no earlier.
    instant& last = s.channel_of->last_due[static_cast<int>(s.dir)];
    due = std::max(due, last);
    last = due;
    channel = s.channel_of->id * 2 + static_cast<channel_id>(s.dir) + 1;
  }
  p.owner->schedule(scheduled_completion{due, ++schedule_sequence_, channel, p.op, s.result, s.message});
  if (std::find(to_wake_.begin(), to_wake_.end(), p.owner) == to_wake_.end()) to_wake_.push_back(p.owner);
}

std::shared_ptr<endpoint> world::take_wake(const endpoint* self) {
  while (!to_wake_.empty()) {
    std::shared_ptr<endpoint> e = std::move(to_wake_.front());
    to_wake_.pop_front();
    if (e.get() != self) return e;
  }
  return nullptr;
}

void world::cancel(endpoint& owner, io_operation& op) {
  const auto it = waiting_.find(static_cast<std::uint64_t>(op.driver_slot));
  if (it == waiting_.end() || it->second.owner != &owner) return;  // its result is known already
  std::deque<pending_op>& queue = (*it->second.where).*(it->second.queue);
  const auto pos = std::find_if(queue.begin(), queue.end(), [&](const pending_op& p) { return p.id == it->first; });
  WEFT_ASSERT(pos != queue.end());
  pending_op p = std::move(*pos);
  queue.erase(pos);
  touch(it->second.where);  // the next in that queue may go now
  finish(p, finished(-ECANCELED));
  settle();
}

void world::cancel_all(endpoint& owner) {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, place] : waiting_) {  // ascending ids: submission order
    if (place.owner == &owner) ids.push_back(id);
  }
  fail_waiting(ids, -ECANCELED);
  settle();
}

void world::fail_waiting(const std::vector<std::uint64_t>& ids, std::int64_t result) {
  for (const std::uint64_t id : ids) {
    const waiting_place place = waiting_.at(id);
    std::deque<pending_op>& queue = (*place.where).*(place.queue);
    const auto pos = std::find_if(queue.begin(), queue.end(), [&](const pending_op& p) { return p.id == id; });
    WEFT_ASSERT(pos != queue.end());
    pending_op p = std::move(*pos);
    queue.erase(pos);
    touch(place.where);
    finish(p, finished(result));
  }
}

void world::crash_host(std::uint32_t h) {
  act_on(h);
  ++here().incarnation;
  std::vector<std::uint64_t> ids;
  for (const auto& [id, place] : waiting_) {  // ascending ids: submission order
    if (place.host == h) ids.push_back(id);
  }
  fail_waiting(ids, -EIO);
  // Every descriptor closes as at a kill: nothing is flushed, connections are reset.
  std::map<int, descriptor> fds = std::move(here().fds);
  here().fds.clear();
  for (auto& [fd, d] : fds) {
    if (d.sock == nullptr) continue;
    const std::shared_ptr<socket> peer = d.sock->peer.lock();
    if (d.sock->type == SOCK_STREAM && peer != nullptr) {
      if (link_blocked(h, peer->host)) {
        // The reset cannot get through: the peer stays half-open until the link opens.
        peer->reset_when_open = true;
        peer->peer.reset();
        d.sock->peer.reset();
      } else {
        reset_connection(d.sock);
      }
    }
    close_socket(d.sock);
  }
  (void)crash_disk(h);
  settle();
}

// Serves one queue of `s`: in arrival order, stopping at the first operation that must still
// wait (`in_order`), or trying every one (pollers, which do not consume anything).
void world::serve(socket& s, std::deque<pending_op> socket::*queue, bool in_order) {
  std::deque<pending_op>& q = s.*queue;
  for (std::size_t i = 0; i < q.size();) {
    act_on(q[i].host);  // an accept served by another host's step takes an fd of its own host
    const step st = attempt(*q[i].op, &q[i]);
    if (!st.done) {
      if (in_order) return;
      ++i;
      continue;
    }
    pending_op p = std::move(q[i]);
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    finish(p, st);
  }
}

void world::settle() {
  while (!dirty_.empty()) {
    std::shared_ptr<socket> s = std::move(dirty_.front());
    dirty_.pop_front();
    s->dirty = false;
    serve(*s, &socket::readers, true);
    serve(*s, &socket::writers, true);
    serve(*s, &socket::connectors, true);
    serve(*s, &socket::senders, true);
    serve(*s, &socket::pollers, false);
  }
}

world::step world::attempt(const io_request& r, pending_op* waiting) {
  switch (r.opcode) {
    case io_opcode::nop: return finished(0);
    case io_opcode::spawn:
    case io_opcode::waitid:
    case io_opcode::kill: return finished(-ENOSYS);  // processes are not simulated
    case io_opcode::socket: return finished(op_socket(r));
    case io_opcode::socketpair: return finished(op_socketpair(r.fd, r.flags, static_cast<int*>(r.data)));
    case io_opcode::pipe: return finished(op_pipe(static_cast<int*>(r.data)));
    case io_opcode::openat: return finished(op_openat(r));
    case io_opcode::statx: return finished(op_statx(r));
    case io_opcode::unlinkat: return finished(op_unlinkat(r));
    case io_opcode::renameat: return finished(op_renameat(r));
    case io_opcode::setsockopt: return finished(op_setsockopt(r));
    case io_opcode::getsockopt: return finished(op_getsockopt(r));
    default: break;
  }
  // An operation on an fd. A waiting one acts for the socket it was started on, even if its fd
  // has been closed or reused since.
  std::shared_ptr<socket> sock;
  std::shared_ptr<open_file> file;
  if (waiting != nullptr && waiting->subject != nullptr) {
    sock = waiting->subject;
    if (sock->closed) return finished(-EBADF);
  } else {
    descriptor* d = lookup(r.fd);
    if (d == nullptr) return finished(-EBADF);
    sock = d->sock;
    file = d->file;
    if (waiting != nullptr) waiting->subject = sock;
  }
  if (r.opcode == io_opcode::close) {
    here().fds.erase(r.fd);
    if (sock) close_socket(sock);
    return finished(0);
  }
  if (file) {
    switch (r.opcode) {
      case io_opcode::read:
      case io_opcode::readv: return op_file_read(*file, r);
      case io_opcode::write:
      case io_opcode::writev: return op_file_write(*file, r);
      case io_opcode::fsync: return finished(op_fsync(*file));
      case io_opcode::ftruncate: return finished(op_ftruncate(*file, r));
      case io_opcode::poll: return finished(r.flags & (POLLIN | POLLOUT));
      case io_opcode::recv:
      case io_opcode::send:
      case io_opcode::recvmsg:
      case io_opcode::sendmsg:
      case io_opcode::accept:
      case io_opcode::connect:
      case io_opcode::shutdown:
      case io_opcode::bind:
      case io_opcode::listen:
      case io_opcode::getsockname:
      case io_opcode::getpeername: return finished(-ENOTSOCK);
      default: return finished(-EINVAL);
    }
  }
  WEFT_ASSERT(sock != nullptr);
  const bool stream = sock->type == SOCK_STREAM;
  switch (r.opcode) {
    case io_opcode::read:
    case io_opcode::readv:
    case io_opcode::recv:
    case io_opcode::recvmsg: return stream ? op_stream_receive(sock, r) : op_datagram_receive(sock, r);
    case io_opcode::write:
    case io_opcode::writev:
    case io_opcode::send:
    case io_opcode::sendmsg: return stream ? op_stream_send(sock, r) : op_datagram_send(sock, r);
    case io_opcode::accept: return op_accept(sock, r);
    case io_opcode::connect: return op_connect(sock, r);
    case io_opcode::poll: return op_poll(sock, r);
    case io_opcode::shutdown: return finished(op_shutdown(sock, r.flags));
    case io_opcode::bind: return finished(op_bind(sock, r));
    case io_opcode::listen: return finished(op_listen(sock, r));
    case io_opcode::getsockname: return finished(op_name(*sock, r, false));
    case io_opcode::getpeername: return finished(op_name(*sock, r, true));
    case io_opcode::fsync:
    case io_opcode::ftruncate: return finished(-EINVAL);
    default: return finished(-EINVAL);
  }
}

}  // namespace weft::sim::io
