// Built-in scenario io_echo — loopback TCP echo between loops on different simulated threads.
//
// The main thread's loop listens on 127.0.0.1 (port 0: the simulated kernel picks one) and
// echoes each of `clients` connections in a task of its own (read, write_all, until the end of
// the stream). Each client is a simulated thread with a loop of its own: it connects, writes
// `messages` messages of seeded sizes (1 byte to 64 KiB) and reads each echo back with
// read_exact, then shuts down writing and reads the end of the stream.
//
// Oracle (io_conversation.hpp): every client reads back exactly the bytes it sent, in order,
// then the end of the stream — whatever io_short, io_latency and io_reorder do to the
// operations; a run that injects io_reset or task_exception accepts a prefix.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/io.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

#include "io_conversation.hpp"

namespace {

using namespace weft;
using sim::scenarios::check_stream;
using sim::scenarios::io_bytes;
using sim::scenarios::io_payload;

constexpr std::int64_t clients_max = 6;
constexpr std::int64_t messages_max = 8;
constexpr std::uint64_t message_bytes_max = 64 * 1024;
constexpr std::size_t echo_chunk_bytes = 16 * 1024;

struct conversation {
  std::string sent;
  std::string received;
  bool complete = false;  // every echo read back, and then the end of the stream
};

// One connection of the server: echoes until the end of the stream or an error.
task<void> echo(tcp_stream conn) {
  std::vector<std::byte> buf(echo_chunk_bytes);
  try {
    for (;;) {
      auto n = co_await conn.read(buf);
      if (!n || *n == 0) break;
      auto w = co_await write_all(conn, std::span<const std::byte>(buf.data(), *n));
      if (!w) break;
    }
  } catch (const injected_fault&) {
    // The conversation ends here: closing the stream tells the client.
  }
}

task<void> serve(tcp_listener& listener, std::int64_t clients) {
  std::vector<join_handle<void>> echoes;
  for (std::int64_t accepted = 0; accepted < clients;) {
    try {
      auto conn = co_await listener.accept();
      if (!conn) continue;
      echoes.push_back(spawn(echo(std::move(*conn))));
      ++accepted;
    } catch (const injected_fault&) {
      // The await threw, not the accept: the connection waits for the next accept.
    }
  }
  for (auto& h : echoes) (void)co_await sim::settle_join(h);
}

task<void> converse(socket_address at, std::vector<std::size_t> sizes, std::uint64_t client, conversation& out) {
  try {
    auto conn = co_await tcp_stream::connect(at);
    if (!conn) co_return;
    for (std::size_t m = 0; m < sizes.size(); ++m) {
      const std::string message = io_payload(sizes[m], client, m);
      out.sent += message;  // before the write: one cut short still sent a prefix of it
      auto w = co_await write_all(*conn, io_bytes(message));
      if (!w) co_return;
      std::string back(message.size(), '\0');
      auto r = co_await read_exact(*conn, std::as_writable_bytes(std::span<char>(back)));
      if (!r) co_return;
      out.received += back;
    }
    auto s = co_await conn->shutdown(SHUT_WR);
    if (!s) co_return;
    std::byte extra[16];
    auto end = co_await conn->read(extra);
    if (!end) co_return;
    if (*end != 0) out.received.append(reinterpret_cast<const char*>(extra), *end);  // the oracle sees it
    out.complete = *end == 0;
  } catch (const injected_fault&) {
    // The conversation ends here (the oracle accepts a prefix under task_exception).
  }
}

}  // namespace

WEFT_SIM_SCENARIO(io_echo) (weft::sim::context& sim) {
  const std::int64_t clients = sim.param("clients", static_cast<std::int64_t>(sim.pick(1, clients_max)));
  const std::int64_t messages = sim.param("messages", static_cast<std::int64_t>(sim.pick(1, messages_max)));
  std::vector<std::vector<std::size_t>> sizes(static_cast<std::size_t>(clients));
  for (auto& per_client : sizes) {
    for (std::int64_t m = 0; m < messages; ++m) per_client.push_back(sim.pick(1, message_bytes_max));
  }

  event_loop server_loop;
  auto bound = sim::scenarios::loopback_listener(sim, server_loop);
  if (!bound) return;
  tcp_listener& listener = bound->first;
  const socket_address at = bound->second;

  std::vector<conversation> talks(static_cast<std::size_t>(clients));
  std::vector<platform::thread> threads;
  sim::join_on_exit join_all(threads);
  for (std::int64_t c = 0; c < clients; ++c) {
    const auto i = static_cast<std::size_t>(c);
    threads.push_back(sim.start_thread([&sim, &talks, &sizes, at, i] {
      sim.name_thread("client-" + std::to_string(i));
      event_loop loop;
      loop.block_on(converse(at, sizes[i], i, talks[i]));
    }));
  }
  server_loop.block_on(serve(listener, clients));
  listener.close();
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < talks.size(); ++i) {
    check_stream(sim, "client " + std::to_string(i), talks[i].sent, talks[i].received, talks[i].complete);
    if (!talks[i].complete && !sim::scenarios::io_conversations_may_break(sim)) {
      sim.fail("client " + std::to_string(i) + " did not finish its conversation");
    }
  }
}
WEFT_SIM_SCENARIO_DOC(io_echo, "clients on their own loops talk to an echo server's loop over loopback TCP");
WEFT_SIM_SCENARIO_KNOBS(io_echo, {{"clients", 1, clients_max, "client threads, each with its own loop"},
                                  {"messages", 1, messages_max, "messages each client sends and reads back"}});
