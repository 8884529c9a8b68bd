// docs/examples/kv_server.cpp — the write-ahead-logged key-value store, served and restarted.
//
// A runtime worker opens kv_store.hpp's server on a fresh log and serves; clients on the main
// thread's own loop, several at once, PUT keys and read them back. The server is stopped
// gracefully, opened again on the same log, and every acknowledged value must be recovered and
// served again. Exits non-zero on a wrong result. The simulator's kv_crash_recovery scenario runs
// the same server and client on hosts that crash.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "kv_store.hpp"

namespace {

constexpr std::size_t clients = 4;
constexpr std::size_t puts_per_client = 16;

std::string key_of(std::size_t c, std::size_t i) { return "k" + std::to_string(c) + "-" + std::to_string(i); }
std::string value_of(std::size_t c, std::size_t i, int round) {
  return "v" + std::to_string(round) + "." + std::to_string(c * 1000 + i);
}

// One client's connection: PUTs its keys with `round`'s values, reading each back.
weft::task<bool> writer(weft::socket_address at, std::size_t c, int round) {
  auto kv = co_await kv_example::client::connect(at);
  if (!kv) co_return false;
  for (std::size_t i = 0; i < puts_per_client; ++i) {
    auto put = co_await kv->put(key_of(c, i), value_of(c, i, round));
    if (!put || put->what != kv_example::reply::kind::ok) co_return false;
    auto got = co_await kv->get(key_of(c, i));
    if (!got || *got != kv_example::reply{kv_example::reply::kind::value, value_of(c, i, round)}) co_return false;
  }
  co_return true;
}

// Every key holds `round`'s value.
weft::task<bool> reader(weft::socket_address at, int round) {
  auto kv = co_await kv_example::client::connect(at);
  if (!kv) co_return false;
  for (std::size_t c = 0; c < clients; ++c) {
    for (std::size_t i = 0; i < puts_per_client; ++i) {
      auto got = co_await kv->get(key_of(c, i));
      if (!got || *got != kv_example::reply{kv_example::reply::kind::value, value_of(c, i, round)}) co_return false;
    }
  }
  auto missing = co_await kv->get("absent");
  co_return missing && missing->what == kv_example::reply::kind::none;
}

// The writers at once (their PUTs share group commits), then a reader.
weft::task<bool> clients_round(weft::socket_address at, int round) {
  std::vector<weft::join_handle<bool>> running;
  for (std::size_t c = 0; c < clients; ++c) running.push_back(weft::spawn(writer(at, c, round)));
  bool ok = true;
  for (auto& h : running) {
    auto done = co_await h;
    ok = ok && done && *done;
  }
  co_return ok && co_await reader(at, round);
}

// Opens the server on worker 0 and leaves it serving there; nullopt when it could not open.
std::optional<std::pair<kv_example::server, weft::join_handle<weft::expected<void, std::error_code>>>> start(
    weft::runtime& rt, const std::string& log) {
  auto opened = rt.worker_scheduler(0).spawn([log] { return kv_example::server::open({.log_path = log}); }).join();
  if (!opened || !*opened) return std::nullopt;
  kv_example::server srv = std::move(**opened);
  auto serving = rt.worker_scheduler(0).spawn([srv] { return srv.serve(); });
  return std::make_pair(std::move(srv), std::move(serving));
}

// Asks for the stop on the server's own worker and waits until serve() has returned.
bool stop(weft::runtime& rt, kv_example::server srv, weft::join_handle<weft::expected<void, std::error_code>> serving) {
  (void)rt.worker_scheduler(0).spawn([srv]() -> weft::task<void> {
    srv.request_stop();
    co_return;
  }).join();
  auto served = serving.join();
  return served && *served;
}

}  // namespace

int main() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string log = std::string(tmp ? tmp : "/tmp") + "/weft-kv-example-" + std::to_string(::getpid()) + ".log";
  ::unlink(log.c_str());
  weft::event_loop loop;  // the clients', on the main thread
  weft::runtime rt = weft::runtime::builder().workers(1).build();
  bool ok = true;
  std::size_t recovered = 0;

  for (int round = 1; round <= 2 && ok; ++round) {
    auto server = start(rt, log);
    if (!server) {
      std::fprintf(stderr, "kv_server: the server could not open %s\n", log.c_str());
      ok = false;
      break;
    }
    auto& [srv, serving] = *server;
    const auto at = weft::socket_address::ipv4_loopback(srv.local_address().port());
    if (round == 2) {
      recovered = srv.recovered().records;
      ok = ok && recovered == clients * puts_per_client && loop.block_on(reader(at, 1));
    }
    ok = ok && loop.block_on(clients_round(at, round));
    ok = stop(rt, std::move(srv), std::move(serving)) && ok;
  }
  (void)std::move(rt).stop();
  ::unlink(log.c_str());
  std::printf("kv_server: %s; %zu records recovered after the restart\n", ok ? "every value served and recovered" : "WRONG RESULT",
              recovered);
  return ok ? 0 : 1;
}
