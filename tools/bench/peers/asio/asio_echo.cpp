// weft-echo-asio — the tcp_echo scenario's server on Boost.Asio (1.74) with C++20 coroutines.
//
//   weft-echo-asio --port P [--threads N]     (../../echo_server_args.hpp)
//
// The same shape as the scenarios peer (asio_scenarios.cpp): one io_context per thread, each run
// by exactly one thread (concurrency hint 1). Each context has its own acceptor on 127.0.0.1:P
// with SO_REUSEPORT (the kernel spreads connections over them) and serves the connections it
// accepts: a coroutine per connection reads into a buffer and writes back what it read
// (`async_write`) until the peer closes. Errors come back through `redirect_error` rather than
// exceptions, so the end of a connection costs no throw. It runs until killed.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/asio/redirect_error.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <sys/socket.h>

#include "../../echo_server_args.hpp"

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

namespace {

awaitable<void> serve(tcp::socket socket) {
  std::vector<char> buffer(bench::echo_buffer_bytes);
  boost::system::error_code ec;
  for (;;) {
    const std::size_t n =
        co_await socket.async_read_some(asio::buffer(buffer), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;  // end of stream or a reset: the client is done
    co_await asio::async_write(socket, asio::buffer(buffer.data(), n), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
}

awaitable<void> accept_loop(tcp::acceptor& acceptor) {
  boost::system::error_code ec;
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      std::fprintf(stderr, "weft-echo-asio: accept: %s\n", ec.message().c_str());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);  // best effort: a peer may already have reset
    asio::co_spawn(acceptor.get_executor(), serve(std::move(socket)), asio::detached);
  }
}

// An acceptor of `ctx` on 127.0.0.1:port that shares the port with the other contexts'.
std::unique_ptr<tcp::acceptor> make_acceptor(asio::io_context& ctx, std::uint16_t port) {
  using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
  const tcp::endpoint at(asio::ip::address_v4::loopback(), port);
  auto acceptor = std::make_unique<tcp::acceptor>(ctx);
  boost::system::error_code ec;
  acceptor->open(at.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->set_option(reuse_port(true), ec);
  if (!ec) acceptor->bind(at, ec);
  if (!ec) acceptor->listen(bench::echo_backlog, ec);
  if (ec) {
    std::fprintf(stderr, "weft-echo-asio: listen on 127.0.0.1:%u: %s\n", unsigned{port}, ec.message().c_str());
    std::exit(1);
  }
  return acceptor;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::echo_server_args a = bench::parse_echo_server_args(argc, argv, "weft-echo-asio");
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  // Every acceptor listens before any thread serves, so a client that finds the port open finds
  // all of them.
  for (unsigned i = 0; i < a.threads; ++i) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
    acceptors.push_back(make_acceptor(*contexts.back(), a.port));
    asio::co_spawn(*contexts.back(), accept_loop(*acceptors.back()), asio::detached);
  }
  std::vector<std::thread> threads;
  for (auto& ctx : contexts) threads.emplace_back([c = ctx.get()] { c->run(); });
  for (auto& t : threads) t.join();
}
