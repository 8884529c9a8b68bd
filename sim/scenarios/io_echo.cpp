// Built-in scenario io_echo — the echo example's own server and client on the simulated runtime.
//
// The server and client are docs/examples/echo_service.hpp's, the functions echo_server.cpp
// runs; this file only sets them up as the example's main() does. `workers` pinned workers each
// bind an SO_REUSEPORT listener on one port (echo_example::listen_here) and serve every
// connection they accept in a task of their own; which listener a connection reaches is drawn
// by the simulated kernel. Each of `clients` simulated threads runs echo_example::client on a
// loop of its own: `connections` connections one after another, each writing `messages`
// messages of seeded sizes (1 byte to 64 KiB), reading every echo back, then shutting down
// writing and reading the end of the stream. When the clients are done, the runtime is stopped.
//
// Oracle (io_conversation.hpp): every connection reads back exactly the bytes it sent, in order,
// then the end of the stream — whatever io_short, io_latency and io_reorder do to the
// operations; a run that injects io_reset or task_exception accepts a prefix.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>

#include "echo_service.hpp"
#include "io_conversation.hpp"
#include "runtime_submitters.hpp"

namespace {

using namespace weft;
using sim::scenarios::check_stream;
using sim::scenarios::io_payload;

constexpr std::int64_t workers_max = 3;
constexpr std::int64_t clients_max = 6;
constexpr std::int64_t connections_max = 2;
constexpr std::int64_t messages_max = 8;
constexpr std::uint64_t message_bytes_max = 64 * 1024;
// Spawns of listen_here an injected inbox_full may refuse, per worker, before the run gives up
// with nothing to check (only a rate near 1 gets there).
constexpr int listen_attempts_max = 1'000;

// The example's client, ended where it stands by an injected fault at one of its awaits: what
// it recorded stays in `talks` (the oracle accepts a prefix under task_exception).
task<void> client_under_faults(std::uint16_t port, echo_example::script plan,
                               std::vector<echo_example::conversation>& talks) {
  try {
    co_await echo_example::client(port, std::move(plan), talks);
  } catch (const injected_fault&) {
    // The client's conversations end here; each is judged by what it recorded.
  }
}

// Leaves worker `w` listening on `port`, as the example's main() does; retries a spawn refused
// `full` (an injected inbox_full). False when the worker is not listening: the run has failed,
// or, with a note, the inbox never took the spawn.
bool listen_on_worker(sim::context& sim, runtime& rt, std::size_t w, std::uint16_t port) {
  for (int attempt = 0; attempt < listen_attempts_max; ++attempt) {
    auto bound = rt.worker_scheduler(w).spawn([port] { return echo_example::listen_here(port); }).join();
    if (bound && *bound) return true;
    if (bound) {
      sim.fail("worker " + std::to_string(w) + " could not bind port " + std::to_string(port));
      return false;
    }
    if (!bound.error().is_rejected() || bound.error().rejection_reason() != queue_error::full) {
      sim.fail("worker " + std::to_string(w) + "'s listen_here ended " + to_string(bound.error().get_kind()));
      return false;
    }
  }
  sim.note("worker " + std::to_string(w) + "'s inbox refused every listen_here: nothing to check");
  return false;
}

}  // namespace

WEFT_SIM_SCENARIO(io_echo) (weft::sim::context& sim) {
  const std::int64_t workers = sim.param("workers", static_cast<std::int64_t>(sim.pick(1, workers_max)));
  const std::int64_t clients = sim.param("clients", static_cast<std::int64_t>(sim.pick(1, clients_max)));
  const std::int64_t connections =
      sim.param("connections", static_cast<std::int64_t>(sim.pick(1, connections_max)));
  const std::int64_t messages = sim.param("messages", static_cast<std::int64_t>(sim.pick(1, messages_max)));
  std::vector<echo_example::script> plans(static_cast<std::size_t>(clients));
  std::uint64_t stream = 0;  // tells every connection's payload apart
  for (auto& plan : plans) {
    plan.resize(static_cast<std::size_t>(connections));
    for (auto& said : plan) {
      for (std::int64_t m = 0; m < messages; ++m) {
        said.push_back(io_payload(sim.pick(1, message_bytes_max), stream, static_cast<std::uint64_t>(m)));
      }
      ++stream;
    }
  }

  event_loop main_loop;  // the port probe's, as on the example's main thread
  const std::uint16_t port = main_loop.block_on(echo_example::free_port());
  if (port == 0) {
    sim.fail("free_port found no port");
    return;
  }
  std::optional<runtime> rt;
  const auto builder = runtime::builder().workers(static_cast<std::size_t>(workers)).pin_workers(true);
  if (!sim::scenarios::start_runtime(sim, builder, rt, "io_echo")) return;
  bool listening = true;
  for (std::size_t w = 0; listening && w < static_cast<std::size_t>(workers); ++w) {
    listening = listen_on_worker(sim, *rt, w, port);
  }

  std::vector<std::vector<echo_example::conversation>> talks(plans.size());
  if (listening) {
    std::vector<platform::thread> threads;
    sim::join_on_exit join_all(threads);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      threads.push_back(sim.start_thread([&sim, &talks, &plans, port, i] {
        sim.name_thread("client-" + std::to_string(i));
        event_loop loop;
        loop.block_on(client_under_faults(port, std::move(plans[i]), talks[i]));
      }));
    }
    for (auto& t : threads) t.join();
  }
  (void)std::move(*rt).stop();
  if (!listening) return;

  for (std::size_t i = 0; i < talks.size(); ++i) {
    if (talks[i].size() != static_cast<std::size_t>(connections)) {
      sim.fail("client " + std::to_string(i) + " recorded " + std::to_string(talks[i].size()) + " of " +
               std::to_string(connections) + " connections");
      continue;
    }
    for (std::size_t c = 0; c < talks[i].size(); ++c) {
      const auto& talk = talks[i][c];
      const std::string who = "client " + std::to_string(i) + " connection " + std::to_string(c);
      check_stream(sim, who, talk.sent, talk.received, talk.complete);
      if (!talk.complete && !sim::scenarios::io_conversations_may_break(sim)) {
        sim.fail(who + " did not finish its conversation");
      }
    }
  }
}
WEFT_SIM_SCENARIO_DOC(io_echo, "the echo example's server (a listener per pinned worker) and clients, over loopback TCP");
WEFT_SIM_SCENARIO_KNOBS(io_echo, {{"workers", 1, workers_max, "pinned workers, each with its own SO_REUSEPORT listener"},
                                  {"clients", 1, clients_max, "client threads, each with its own loop"},
                                  {"connections", 1, connections_max, "connections each client opens, one after another"},
                                  {"messages", 1, messages_max, "messages each connection sends and reads back"}});
