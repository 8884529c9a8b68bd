// docs/examples/echo_service.hpp — the echo example's server and client.
//
// The server: each worker binds its own SO_REUSEPORT listener on one port (listen_here) and
// serves every connection it accepts on itself, in a task of its own (tasks never move). The
// client: connections one after another, each writing its messages, reading every echo back,
// then ending its side of the stream and reading the server's end.
//
// echo_server.cpp runs these on a real runtime; the simulator's io_echo scenario runs the same
// functions on its simulated runtime and kernel, with its own messages and several clients.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <weft/io.hpp>
#include <weft/weft.hpp>

namespace echo_example {

inline constexpr std::size_t serve_chunk_bytes = 1024;

// Echoes one connection until the client ends the stream or the connection fails.
inline weft::task<void> serve(weft::tcp_stream stream) {
  std::byte buffer[serve_chunk_bytes];
  for (;;) {
    auto n = co_await stream.read(buffer);
    if (!n || *n == 0) co_return;  // reset or end of stream: the client is done
    if (!co_await weft::write_all(stream, std::span<const std::byte>(buffer, *n))) co_return;
  }
}

// Accepts forever on this worker, serving each connection here.
inline weft::task<void> accept_loop(weft::tcp_listener listener) {
  for (;;) {
    auto stream = co_await listener.accept();
    if (!stream) continue;
    weft::builtins::current().scheduler().spawn([s = std::move(*stream)]() mutable { return serve(std::move(s)); }).detach();
  }
}

// Binds this worker's own listener on `port` and leaves its accept loop running here.
inline weft::task<bool> listen_here(std::uint16_t port) {
  auto listener = weft::tcp_listener::bind(weft::socket_address::ipv4_loopback(port),
                                           weft::listen_options{.reuse_port = true});
  if (!listener) co_return false;
  weft::builtins::current().scheduler().spawn([l = std::move(*listener)]() mutable { return accept_loop(std::move(l)); }).detach();
  co_return true;
}

// A free port: a listener bound to port 0 learns one and closes again.
inline weft::task<std::uint16_t> free_port() {
  auto probe = weft::tcp_listener::bind(weft::socket_address::ipv4_loopback(0),
                                        weft::listen_options{.reuse_port = true});
  if (!probe) co_return 0;
  co_return probe->local_address()->port();
}

// What one connection carried, recorded as it goes: what happened before an error (or an
// exception out of an await) stays recorded.
struct conversation {
  std::string sent;       // each message, from just before its write: one cut short still sent a prefix
  std::string received;   // the echoes read back whole, then any bytes read after the client's end
  bool complete = false;  // every echo read back, then the server's end of the stream

  bool echoed() const { return complete && received == sent; }
};

// One connection to 127.0.0.1:`port`: writes each message and reads its echo back, then shuts
// down writing and reads the end of the stream the server sends back.
inline weft::task<void> converse(std::uint16_t port, std::vector<std::string> messages, conversation& out) {
  auto stream = co_await weft::tcp_stream::connect(weft::socket_address::ipv4_loopback(port));
  if (!stream) co_return;
  for (const std::string& message : messages) {
    out.sent += message;
    if (!co_await weft::write_all(*stream, std::as_bytes(std::span<const char>(message)))) co_return;
    std::string back(message.size(), '\0');
    if (!co_await weft::read_exact(*stream, std::as_writable_bytes(std::span<char>(back)))) co_return;
    out.received += back;
  }
  if (!co_await stream->shutdown(SHUT_WR)) co_return;
  std::byte extra[16];
  auto end = co_await stream->read(extra);
  if (!end) co_return;
  out.received.append(reinterpret_cast<const char*>(extra), *end);  // an extra byte is a wrong echo
  out.complete = *end == 0;
}

// What the client says: connection c writes script[c], one message after another.
using script = std::vector<std::vector<std::string>>;

// The example's script: `connections` connections, connection c writing "echo <c>" once.
inline script greetings(std::size_t connections) {
  script s(connections);
  for (std::size_t c = 0; c < connections; ++c) s[c].push_back("echo " + std::to_string(c));
  return s;
}

// The client: its connections one after another; talks[c] is what connection c carried.
inline weft::task<void> client(std::uint16_t port, script plan, std::vector<conversation>& talks) {
  talks.assign(plan.size(), conversation{});
  for (std::size_t c = 0; c < plan.size(); ++c) co_await converse(port, std::move(plan[c]), talks[c]);
}

}  // namespace echo_example
