// Driver-level helpers for the simulated I/O tests: an operation that counts its completions,
// requests spelled as the runtime's I/O objects spell them, and a TCP exchange between two
// simulated threads, each with a driver of its own (as two loops would have).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

#include <weft/platform/driver.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::io_test {

using platform::driver;
using platform::io_opcode;
using platform::io_request;

struct op final : platform::io_operation {
  explicit op(const io_request& r) : platform::io_operation() { static_cast<io_request&>(*this) = r; }
  void complete(std::int64_t r) noexcept override {
    result = r;
    ++completions;
  }
  std::int64_t result = 0;
  int completions = 0;
};

// Drives `d` (poll, then wait) until `o` completes.
inline std::int64_t finish(driver& d, op& o) {
  for (;;) {
    d.poll();
    if (o.completions > 0) return o.result;
    d.wait(std::nullopt);
  }
}

inline std::int64_t submit_and_finish(driver& d, const io_request& r) {
  op o(r);
  d.submit(o);
  return finish(d, o);
}

inline io_request request(io_opcode code, int fd) {
  io_request r;
  r.opcode = code;
  r.fd = fd;
  return r;
}

inline int open_socket(driver& d, int domain, int type) {
  io_request r = request(io_opcode::socket, domain);
  r.flags = type | SOCK_CLOEXEC;
  return static_cast<int>(d.execute(r));
}

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

inline std::int64_t bind_to(driver& d, int fd, sockaddr_in& a) {
  io_request r = request(io_opcode::bind, fd);
  r.addr = reinterpret_cast<sockaddr*>(&a);
  r.addr_size = sizeof a;
  return d.execute(r);
}

inline std::int64_t listen_on(driver& d, int fd, int backlog) {
  io_request r = request(io_opcode::listen, fd);
  r.size = static_cast<std::size_t>(backlog);
  return d.execute(r);
}

inline std::uint16_t local_port(driver& d, int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  io_request r = request(io_opcode::getsockname, fd);
  r.addr = reinterpret_cast<sockaddr*>(&a);
  r.addr_len = &len;
  return d.execute(r) == 0 ? ntohs(a.sin_port) : 0;
}

inline std::int64_t connect_to(driver& d, int fd, std::uint16_t port) {
  sockaddr_in a = loopback(port);
  io_request r = request(io_opcode::connect, fd);
  r.addr = reinterpret_cast<sockaddr*>(&a);
  r.addr_size = sizeof a;
  return submit_and_finish(d, r);
}

inline std::int64_t accept_on(driver& d, int fd) { return submit_and_finish(d, request(io_opcode::accept, fd)); }

inline std::int64_t close_fd(driver& d, int fd) { return d.execute(request(io_opcode::close, fd)); }

// Sends every byte, honouring short sends. Returns 0, or the first error.
inline std::int64_t send_all(driver& d, int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    io_request r = request(io_opcode::send, fd);
    r.data = const_cast<char*>(bytes.data() + sent);
    r.size = bytes.size() - sent;
    const std::int64_t n = submit_and_finish(d, r);
    if (n <= 0) return n < 0 ? n : -EIO;  // a stream send never answers 0 for a non-empty buffer
    sent += static_cast<std::size_t>(n);
  }
  return 0;
}

// Receives until `want` bytes or the end of the stream (or an error, returned as a negative
// number in `error`).
inline std::string receive(driver& d, int fd, std::size_t want, std::int64_t* error = nullptr) {
  std::string out;
  char buf[4'096];
  while (out.size() < want) {
    io_request r = request(io_opcode::recv, fd);
    r.data = buf;
    r.size = std::min(sizeof buf, want - out.size());
    const std::int64_t n = submit_and_finish(d, r);
    if (n <= 0) {
      if (error != nullptr) *error = n;
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A listener on a free loopback port with one connection made to it, on one driver.
struct connection {
  int listener = -1;
  int client = -1;
  std::uint16_t port = 0;
};
inline connection connect_pair(driver& d, int backlog) {
  connection c;
  c.listener = open_socket(d, AF_INET, SOCK_STREAM);
  sockaddr_in a = loopback(0);
  bind_to(d, c.listener, a);
  listen_on(d, c.listener, backlog);
  c.port = local_port(d, c.listener);
  c.client = open_socket(d, AF_INET, SOCK_STREAM);
  connect_to(d, c.client, c.port);
  return c;
}

inline io_request receive_request(int fd, char* buf, std::size_t size) {
  io_request r = request(io_opcode::recv, fd);
  r.data = buf;
  r.size = size;
  return r;
}

// A payload of `n` bytes that tells positions apart.
inline std::string pattern(std::size_t n, std::uint64_t salt) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + salt * 7 + i / 251) & 0xff);
  return s;
}

// Whether `error` is how a stream ends under the io_reset fault (when the run injects it).
inline bool reset_tolerated(const context& sim, std::int64_t error) {
  return sim.fault_enabled(platform::fault::io_reset) && (error == -ECONNRESET || error == -EPIPE || error == 0);
}

// Sends `bytes` and checks the send, unless a reset the run injects ended the stream.
inline void checked_send(context& sim, driver& d, int fd, const std::string& bytes, const char* who) {
  const std::int64_t rc = send_all(d, fd, bytes);
  if (rc != 0 && !reset_tolerated(sim, rc)) sim.fail(std::string(who) + " send answered " + std::to_string(rc));
}

// Receives `expected.size()` bytes and checks they are `expected`: every byte once, in order.
// A stream a reset ended early must still hold a prefix of what was sent.
inline void checked_receive(context& sim, driver& d, int fd, const std::string& expected, const char* who) {
  std::int64_t error = 0;
  const std::string got = receive(d, fd, expected.size(), &error);
  if (got == expected) return;
  const bool prefix = expected.compare(0, got.size(), got) == 0;
  if (prefix && reset_tolerated(sim, error)) return;
  sim.fail(std::string(who) + " received " + std::to_string(got.size()) + " of " + std::to_string(expected.size()) +
           " bytes, " + (prefix ? "a prefix" : "not what was sent") + "; the receive ended with " + std::to_string(error));
}

// A server thread and a client thread, each on its own driver, exchange payloads of seeded sizes
// both ways over loopback TCP; every byte must arrive once, in order. Sizes come from the
// scenario's stream; a thread start the fault plan refuses is retried.
inline void tcp_exchange(context& sim) {
  const std::size_t to_server = sim.pick(1, 200'000);
  const std::size_t to_client = sim.pick(1, 200'000);
  driver server_driver;
  const int listener = open_socket(server_driver, AF_INET, SOCK_STREAM);
  sockaddr_in any = loopback(0);
  if (listener < 0 || bind_to(server_driver, listener, any) != 0 || listen_on(server_driver, listener, 8) != 0) {
    sim.fail("could not set up the listener");
    return;
  }
  const std::uint16_t port = local_port(server_driver, listener);
  platform::thread client = sim.start_thread([&sim, port, to_server, to_client] {
    driver d;
    const int fd = open_socket(d, AF_INET, SOCK_STREAM);
    if (const std::int64_t c = connect_to(d, fd, port); c != 0) {
      sim.fail("connect answered " + std::to_string(c));
      return;
    }
    checked_send(sim, d, fd, pattern(to_server, 1), "client");
    checked_receive(sim, d, fd, pattern(to_client, 2), "client");
    close_fd(d, fd);
  });
  const std::int64_t conn = accept_on(server_driver, listener);
  if (conn < 0) {
    sim.fail("accept answered " + std::to_string(conn));
  } else {
    checked_receive(sim, server_driver, static_cast<int>(conn), pattern(to_server, 1), "server");
    checked_send(sim, server_driver, static_cast<int>(conn), pattern(to_client, 2), "server");
    close_fd(server_driver, static_cast<int>(conn));
  }
  client.join();
  close_fd(server_driver, listener);
}

// Writes a file of seeded size, reads it back and unlinks it; io_error, io_short and io_no_space
// answers are accepted when the run injects those faults.
inline void file_round_trip(context& sim) {
  driver d;
  io_request open = request(io_opcode::openat, -1);
  open.path = "/round-trip";
  open.flags = O_CREAT | O_RDWR | O_TRUNC;
  const std::int64_t fd = submit_and_finish(d, open);
  if (fd < 0) {
    sim.fail("openat answered " + std::to_string(fd));
    return;
  }
  const std::string bytes = pattern(sim.pick(1, 100'000), 3);
  io_request w = request(io_opcode::write, static_cast<int>(fd));
  w.data = const_cast<char*>(bytes.data());
  w.size = bytes.size();
  w.offset = 0;
  const std::int64_t written = submit_and_finish(d, w);
  std::string back(bytes.size(), '\0');
  io_request r = request(io_opcode::read, static_cast<int>(fd));
  r.data = back.data();
  r.size = back.size();
  r.offset = 0;
  const std::int64_t read = submit_and_finish(d, r);
  const bool faulty = sim.fault_enabled(platform::fault::io_error) || sim.fault_enabled(platform::fault::io_short) ||
                      sim.fault_enabled(platform::fault::io_no_space);
  if (!faulty && (written != static_cast<std::int64_t>(bytes.size()) || read != written || back != bytes)) {
    sim.fail("the file did not read back what was written");
  }
  close_fd(d, static_cast<int>(fd));
  io_request unlink = request(io_opcode::unlinkat, -1);
  unlink.path = "/round-trip";
  submit_and_finish(d, unlink);
}

}  // namespace weft::sim::io_test
