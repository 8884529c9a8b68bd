// docs/examples/echo_server.cpp — a TCP echo server with one SO_REUSEPORT listener per worker.
//
// Each pinned worker binds its own listener on the same port; the kernel spreads connections
// among them, and every connection is served on the worker that accepted it (tasks never move).
// A client on the main thread's own loop opens several connections, checks every echo, and the
// runtime is stopped. Exits non-zero on a wrong result.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr std::size_t workers = 2;
constexpr int connections = 8;

weft::task<void> serve(weft::tcp_stream stream) {
  std::byte buffer[1024];
  for (;;) {
    auto n = co_await stream.read(buffer);
    if (!n || *n == 0) co_return;  // reset or end of stream: the client is done
    if (!co_await weft::write_all(stream, std::span<const std::byte>(buffer, *n))) co_return;
  }
}

// Accepts forever on this worker, serving each connection here.
weft::task<void> accept_loop(weft::tcp_listener listener) {
  for (;;) {
    auto stream = co_await listener.accept();
    if (!stream) continue;
    weft::builtins::current().scheduler().spawn([s = std::move(*stream)]() mutable { return serve(std::move(s)); }).detach();
  }
}

// Binds this worker's own listener on `port` and leaves its accept loop running here.
weft::task<bool> listen_here(std::uint16_t port) {
  auto listener = weft::tcp_listener::bind(weft::socket_address::ipv4_loopback(port),
                                           weft::listen_options{.reuse_port = true});
  if (!listener) co_return false;
  weft::builtins::current().scheduler().spawn([l = std::move(*listener)]() mutable { return accept_loop(std::move(l)); }).detach();
  co_return true;
}

// A free port: a listener bound to port 0 learns one and closes again.
weft::task<std::uint16_t> free_port() {
  auto probe = weft::tcp_listener::bind(weft::socket_address::ipv4_loopback(0),
                                        weft::listen_options{.reuse_port = true});
  if (!probe) co_return 0;
  co_return probe->local_address()->port();
}

weft::task<int> client(std::uint16_t port) {
  int ok = 0;
  for (int i = 0; i < connections; ++i) {
    auto stream = co_await weft::tcp_stream::connect(weft::socket_address::ipv4_loopback(port));
    if (!stream) continue;
    const std::string message = "echo " + std::to_string(i);
    if (!co_await weft::write_all(*stream, std::as_bytes(std::span<const char>(message)))) continue;
    std::string back(message.size(), '\0');
    if (!co_await weft::read_exact(*stream, std::as_writable_bytes(std::span<char>(back)))) continue;
    if (back == message) ++ok;
  }
  co_return ok;
}

}  // namespace

int main() {
  weft::event_loop loop;  // the client's, on the main thread
  const std::uint16_t port = loop.block_on(free_port());
  weft::runtime rt = weft::runtime::builder().workers(workers).pin_workers(true).build();
  for (std::size_t w = 0; w < workers; ++w) {
    auto bound = rt.worker_scheduler(w).spawn([port] { return listen_here(port); }).join();
    if (!bound || !*bound) {
      std::fprintf(stderr, "echo_server: worker %zu could not bind port %u\n", w, port);
      return 1;
    }
  }
  const int ok = loop.block_on(client(port));
  (void)std::move(rt).stop();
  std::printf("echo_server: %d of %d connections echoed on port %u\n", ok, connections, port);
  return ok == connections ? 0 : 1;
}
