// two_hosts.cpp — a user's service on two simulated hosts (weft/sim/host.hpp), for the
// installed-library check: a server host echoes what a client host sends, across a link with
// latency and a partition that is repaired; the server is shut down gracefully at the end.
#include <chrono>
#include <cstdint>
#include <exception>
#include <span>
#include <string>

#include <weft/io.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/host.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/weft.hpp>

namespace {

using namespace std::chrono_literals;

constexpr std::uint16_t port = 7000;
constexpr int connect_attempts = 100;

weft::task<void> echo_one_connection() {
  auto listener = weft::tcp_listener::bind(*weft::socket_address::parse("0.0.0.0:" + std::to_string(port)));
  if (!listener) co_return;
  auto s = co_await listener->accept();
  if (!s) co_return;
  std::byte buffer[64];
  for (;;) {
    auto n = co_await s->read(buffer);
    if (!n || *n == 0) co_return;
    if (!co_await weft::write_all(*s, std::span<const std::byte>(buffer, *n))) co_return;
  }
}

weft::task<std::string> say_hello(weft::socket_address server) {
  for (int attempt = 0; attempt < connect_attempts; ++attempt) {
    auto s = co_await weft::tcp_stream::connect(server);
    if (!s) {
      co_await weft::sleep(1ms);  // the server is not listening yet
      continue;
    }
    const std::string hello = "hello";
    if (!co_await weft::write_all(*s, std::as_bytes(std::span<const char>(hello)))) co_return "write failed";
    std::string back(hello.size(), '\0');
    if (!co_await weft::read_exact(*s, std::as_writable_bytes(std::span<char>(back)))) co_return "read failed";
    co_return back;
  }
  co_return "never connected";
}

}  // namespace

WEFT_SIM_SCENARIO(two_hosts)(weft::sim::context& sim) {
  const auto server = sim.add_host("server");
  const auto client = sim.add_host("client");
  if (!server || !client) return;
  sim.set_latency(*server, *client, 1ms, 5ms);
  sim.boot(*server, [](weft::sim::host_process& p) {
    auto rt = weft::runtime::builder().workers(1).build();
    p.on_crash([ops = rt.operations()] { ops.request_stop(); });
    p.on_shutdown([ops = rt.operations()] { ops.request_stop(); });
    try {
      rt.block_on(echo_one_connection());
    } catch (const std::exception&) {
      // Stopped while it waited.
    }
    (void)std::move(rt).stop();
  });
  if (sim.chance(1, 2)) sim.partition(*server, *client);
  std::string answer;
  auto at = *weft::socket_address::parse(server->ipv4() + ":" + std::to_string(port));
  weft::platform::thread t = sim.start_on(*client, [&] {
    weft::event_loop loop;
    answer = loop.block_on(say_hello(at));
  });
  sim.repair(*server, *client);  // repairing an open link changes nothing
  t.join();
  if (answer != "hello") sim.fail("the client got '" + answer + "' back");
  sim.shutdown(*server);
}
WEFT_SIM_SCENARIO_DOC(two_hosts, "a client host and a server host echoing across a link that may be partitioned");
