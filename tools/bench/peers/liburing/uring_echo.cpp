// weft-echo-liburing — the machine's reference echo server of the tcp_echo scenario: liburing
// with no runtime at all, what a hand-written io_uring loop gets out of this kernel.
//
//   weft-echo-liburing --port P [--threads N]     (../../echo_server_args.hpp)
//
// Each of N threads owns one ring and one SO_REUSEPORT listener on 127.0.0.1:P (the kernel
// spreads connections over the listeners) and serves the connections it accepts itself:
// accept → recv → send (the rest again until all is sent) → recv ... until the peer closes.
// The ring is set up single-issuer with deferred task work where the kernel offers it (fewer
// interrupts of the thread), falling back to cooperative task work, then to none.
// It runs until killed (compare.sh sends SIGTERM).
#include <liburing.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../echo_server_args.hpp"

namespace {

constexpr unsigned ring_entries = 1024;

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "weft-echo-liburing: %s: %s\n", what, std::strerror(err));
  std::exit(1);
}

int make_listener(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket", errno);
  const int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) die("SO_REUSEADDR", errno);
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) die("SO_REUSEPORT", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) die("bind", errno);
  if (::listen(fd, bench::echo_backlog) != 0) die("listen", errno);
  return fd;
}

// The kinds of operation in flight, kept in the low bits of user_data beside the connection's
// address (connections are 8-aligned).
enum op : std::uint64_t { op_accept = 1, op_recv = 2, op_send = 3 };
constexpr std::uint64_t op_mask = 7;

struct connection {
  int fd = -1;
  std::uint32_t length = 0;  // bytes of the last recv
  std::uint32_t sent = 0;
  alignas(64) std::byte buffer[bench::echo_buffer_bytes];
};
static_assert(alignof(connection) > op_mask);

class worker {
 public:
  // Made on the thread that runs it: a SINGLE_ISSUER ring belongs to the thread that set it up.
  explicit worker(int listener) : listener_(listener) {
    io_uring_params p{};
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int rc = io_uring_queue_init_params(ring_entries, &ring_, &p);
    if (rc == -EINVAL) {
      p = io_uring_params{};
      p.flags = IORING_SETUP_COOP_TASKRUN;
      rc = io_uring_queue_init_params(ring_entries, &ring_, &p);
    }
    if (rc == -EINVAL) rc = io_uring_queue_init(ring_entries, &ring_, 0);
    if (rc < 0) die("io_uring_queue_init", -rc);
  }
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  [[noreturn]] void run() {
    arm_accept();
    for (;;) {
      const int rc = io_uring_submit_and_wait(&ring_, 1);
      if (rc < 0 && rc != -EINTR) die("io_uring_submit_and_wait", -rc);
      io_uring_cqe* cqe = nullptr;
      unsigned head = 0, seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        complete(cqe->user_data, cqe->res);
        ++seen;
      }
      io_uring_cq_advance(&ring_, seen);
    }
  }

 private:
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring_);
    while (s == nullptr) {  // the submission queue is full: hand it to the kernel first
      io_uring_submit(&ring_);
      s = io_uring_get_sqe(&ring_);
    }
    return s;
  }
  static std::uint64_t tag(connection* c, op o) { return reinterpret_cast<std::uint64_t>(c) | o; }

  void arm_accept() {
    io_uring_sqe* s = sqe();
    io_uring_prep_accept(s, listener_, nullptr, nullptr, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(s, tag(nullptr, op_accept));
  }
  void arm_recv(connection* c) {
    io_uring_sqe* s = sqe();
    io_uring_prep_recv(s, c->fd, c->buffer, sizeof c->buffer, 0);
    io_uring_sqe_set_data64(s, tag(c, op_recv));
  }
  void arm_send(connection* c) {
    io_uring_sqe* s = sqe();
    io_uring_prep_send(s, c->fd, c->buffer + c->sent, c->length - c->sent, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(s, tag(c, op_send));
  }
  static void drop(connection* c) {
    ::close(c->fd);
    delete c;
  }

  void complete(std::uint64_t data, int res) {
    auto* c = reinterpret_cast<connection*>(data & ~op_mask);
    switch (data & op_mask) {
      case op_accept:
        if (res >= 0) {
          const int one = 1;
          ::setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // best effort, as in the peers
          auto* fresh = new connection;
          fresh->fd = res;
          arm_recv(fresh);
        } else if (res != -EINTR && res != -ECONNABORTED) {
          die("accept", -res);
        }
        arm_accept();
        return;
      case op_recv:
        if (res <= 0) return drop(c);  // end of stream or a reset: the client is done
        c->length = static_cast<std::uint32_t>(res);
        c->sent = 0;
        return arm_send(c);
      case op_send:
        if (res <= 0) return drop(c);
        c->sent += static_cast<std::uint32_t>(res);
        return c->sent < c->length ? arm_send(c) : arm_recv(c);
      default:
        std::abort();
    }
  }

  int listener_;
  io_uring ring_{};
};

}  // namespace

int main(int argc, char** argv) {
  const bench::echo_server_args a = bench::parse_echo_server_args(argc, argv, "weft-echo-liburing");
  // Every listener is bound before any thread serves, so a client that finds the port open finds
  // all of them.
  std::vector<int> listeners;
  for (unsigned i = 0; i < a.threads; ++i) listeners.push_back(make_listener(a.port));
  std::vector<std::thread> threads;
  for (const int fd : listeners) threads.emplace_back([fd] { worker(fd).run(); });
  for (auto& t : threads) t.join();
}
