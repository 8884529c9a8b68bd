// Built-in scenario kv_crash_recovery — the key-value example's server on a host that crashes,
// restarts and is cut off from its clients, which keep writing and reading through it all.
//
// Hosts: `kv` runs docs/examples/kv_store.hpp's server, unchanged, on a runtime of one worker
// (log "kv.log" on its own disk, port 7000 on every address); `client-1` ... `client-N` each run
// one client loop. Each client owns its keys and follows a plan drawn from the seed: PUTs of
// fresh values and GETs, one at a time, each retried (new connection, short pause) until it gets
// an answer, every request under a deadline. While the fault window lasts, the scenario crashes
// the server or restarts it gracefully (booting it again after a pause), partitions or holds a
// client's links, or resets its connections, at seeded times, each undone after a pause. When
// the window closes it restarts the server gracefully (as an operator would one whose disk
// failed under the fault plan), and the liveness phase begins: every client must finish its plan
// and a last GET of each of its keys within the recovery bound. At the end the server is shut
// down gracefully.
//
// Oracle: a GET answers the value of the key's latest PUT, every one of which was acknowledged
// before the GET was sent (one writer per key, requests in order), or NONE before the first —
// anything else means an acknowledged write was lost, or a value was never written; after the
// fault window every request completes (context::start_liveness). The knob ack_before_fsync=1
// runs the example's known-bad server, which acknowledges a PUT before its fdatasync; a crash in
// between loses it, and the oracle catches that.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/io.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/host.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

#include "kv_store.hpp"

namespace {

using namespace std::chrono_literals;
using weft::duration;

constexpr std::uint16_t kv_port = 7000;
constexpr std::int64_t clients_max = 3;
constexpr std::int64_t requests_max = 16;  // per client, before its last sweep of GETs
constexpr std::int64_t keys_max = 4;       // per client
constexpr std::int64_t faults_max = 6;     // crashes and link faults in the fault window
// The fault window covers the clients' plans (a request takes a few milliseconds of virtual
// time); after it, they must finish within the recovery bound.
constexpr duration fault_window = 60ms;
constexpr duration recovery_bound = 10s;
constexpr duration request_limit = 50ms;  // a client's deadline for a connect or a request
constexpr duration retry_pause = 5ms;
constexpr duration fault_length_max = 20ms;  // how long a crashed server or a cut link stays so
// Tries at a runtime start or a spawn the fault plan refuses (worker_start_failure, inbox_full):
// all of them fail only at a rate near 1.
constexpr int start_attempts_max = 1'000;

struct step {
  bool put = false;
  std::string key;
  std::string value;  // a PUT's
};

// What one client does and what it saw.
struct client_run {
  std::vector<step> plan;
  std::vector<std::string> keys;
  std::map<std::string, std::string> latest;  // key -> value of its latest PUT (all acknowledged)
  std::vector<std::string> wrong;              // the oracle's findings
  std::size_t next = 0;                        // the plan's next step, then the sweep's next key
  bool finished = false;
};

std::string show(const std::optional<std::string>& v) { return v ? "'" + *v + "'" : "NONE"; }

// One request, retried until it is answered: a fresh connection whenever the last one failed or
// timed out. Answers the reply.
weft::task<kv_example::reply> until_answered(weft::socket_address server, std::optional<kv_example::client>& link,
                                             const step& s) {
  for (;;) {
    if (!link) {
      auto connected = co_await weft::timeout(request_limit, kv_example::client::connect(server));
      if (connected && *connected) link.emplace(std::move(**connected));
    }
    if (link) {
      auto answer = co_await weft::timeout(request_limit, s.put ? link->put(s.key, s.value) : link->get(s.key));
      if (answer && *answer && (*answer)->what != kv_example::reply::kind::error) co_return std::move(**answer);
      link.reset();  // a broken or slow connection, or a server that refused: start again
    }
    co_await weft::sleep(retry_pause);
  }
}

// Checks a GET's answer against what this client acknowledged.
void judge(client_run& run, const std::string& key, const kv_example::reply& r) {
  const auto it = run.latest.find(key);
  const std::optional<std::string> want = it == run.latest.end() ? std::nullopt : std::optional(it->second);
  std::optional<std::string> got;
  if (r.what == kv_example::reply::kind::value) got = r.text;
  if (got != want) {
    run.wrong.push_back("GET " + key + " answered " + show(got) + " after PUT " + show(want) +
                        " was acknowledged: an acknowledged write was lost, or a value never written was read");
  }
}

// The plan from run->next on, then a GET of every key. An injected task_exception may end it at
// any await; client_thread starts it again at the step it stopped in (which may have been applied
// or not, as after a timeout).
weft::task<void> client_main(weft::socket_address server, client_run* run) {
  std::optional<kv_example::client> link;
  for (; run->next < run->plan.size(); ++run->next) {
    const step& s = run->plan[run->next];
    const kv_example::reply r = co_await until_answered(server, link, s);
    if (s.put) {
      if (r.what == kv_example::reply::kind::ok) run->latest[s.key] = s.value;
    } else {
      judge(*run, s.key, r);
    }
  }
  for (; run->next < run->plan.size() + run->keys.size(); ++run->next) {
    const std::string& key = run->keys[run->next - run->plan.size()];
    judge(*run, key, co_await until_answered(server, link, step{false, key, {}}));
  }
  run->finished = true;
}

void client_thread(weft::socket_address server, client_run* run) {
  weft::event_loop loop;
  while (!run->finished) {
    try {
      loop.block_on(client_main(server, run));
    } catch (const weft::injected_fault&) {
      // Go on where it stopped.
    }
  }
}

// The kv host's software: the example's server on a runtime of one worker, until a crash (the
// runtime's stop cancels it where it waits) or a graceful shutdown (the server's own stop). A
// server ended by an injected fault leaves main; the next restart boots it again.
void kv_host_main(weft::sim::host_process& p, bool ack_before_fsync) {
  std::optional<weft::runtime> rt;
  for (int attempt = 0; !rt && attempt < start_attempts_max; ++attempt) {
    try {
      rt.emplace(weft::runtime::builder().workers(1).build());
    } catch (const weft::start_error&) {
      // An injected worker start failure: try again.
    }
  }
  if (!rt) return;
  struct serving {
    std::optional<kv_example::server> server;
    bool stop_asked = false;
  };
  auto state = std::make_shared<serving>();
  p.on_crash([ops = rt->operations()] { ops.request_stop(); });
  // The stop must be asked for on the server's own loop. A spawn refused full, or ended by an
  // injected fault, is tried again; one refused because the runtime has stopped is not needed.
  p.on_shutdown([sched = rt->worker_scheduler(0), state]() mutable {
    for (int attempt = 0; attempt < start_attempts_max; ++attempt) {
      auto asked = sched.spawn([state]() -> weft::task<void> {
                          state->stop_asked = true;
                          if (state->server) state->server->request_stop();
                          co_return;
                        }).join();
      if (asked) return;
      if (asked.error().is_rejected() && asked.error().rejection_reason() != weft::queue_error::full) return;
    }
  });
  try {
    rt->block_on([state, ack_before_fsync]() -> weft::task<void> {
      kv_example::server_config config;
      config.address = *weft::socket_address::parse("0.0.0.0:" + std::to_string(kv_port));
      config.ack_before_fsync = ack_before_fsync;
      auto opened = co_await kv_example::server::open(config);
      if (!opened) co_return;
      state->server = std::move(*opened);
      if (state->stop_asked) state->server->request_stop();
      (void)co_await state->server->serve();
    });
  } catch (const std::exception&) {
    // Cancelled by the crash's stop, or refused after it.
  }
  (void)std::move(*rt).stop();
}

}  // namespace

WEFT_SIM_SCENARIO(kv_crash_recovery) (weft::sim::context& sim) {
  const std::int64_t clients = sim.param("clients", static_cast<std::int64_t>(sim.pick(1, clients_max)));
  const std::int64_t requests = sim.param("requests", static_cast<std::int64_t>(sim.pick(1, requests_max)));
  const std::int64_t faults = sim.param("faults", static_cast<std::int64_t>(sim.pick(0, faults_max)));
  const bool ack_before_fsync = sim.param("ack_before_fsync", 0) != 0;

  std::vector<client_run> runs(static_cast<std::size_t>(clients));
  for (std::size_t c = 0; c < runs.size(); ++c) {
    client_run& run = runs[c];
    const std::uint64_t keys = sim.pick(1, keys_max);
    for (std::uint64_t k = 0; k < keys; ++k) run.keys.push_back("c" + std::to_string(c) + "k" + std::to_string(k));
    for (std::int64_t i = 0; i < requests; ++i) {
      step s{sim.chance(2, 3), run.keys[sim.pick(0, keys - 1)], {}};
      if (s.put) s.value = "v" + std::to_string(i);
      run.plan.push_back(std::move(s));
    }
  }

  const auto kv = sim.add_host("kv");
  std::vector<weft::sim::host> client_hosts;
  for (std::int64_t c = 1; c <= clients; ++c) client_hosts.push_back(*sim.add_host("client-" + std::to_string(c)));
  const weft::socket_address server = *weft::socket_address::parse(kv->ipv4() + ":" + std::to_string(kv_port));

  sim.start_liveness(fault_window, recovery_bound);
  const auto boot = [&] { sim.boot(*kv, [ack_before_fsync](weft::sim::host_process& p) { kv_host_main(p, ack_before_fsync); }); };
  boot();
  std::vector<weft::platform::thread> threads;
  for (std::size_t c = 0; c < runs.size(); ++c) {
    threads.push_back(sim.start_on(client_hosts[c], [server, run = &runs[c]] { client_thread(server, run); }));
  }

  // The faults, at seeded times inside the window; each undone after a seeded pause.
  weft::event_loop here;
  const auto pause = [&here, &sim](duration d) {
    const weft::instant until = sim.now() + d;
    while (sim.now() < until) {
      try {
        here.block_on([](weft::instant t) -> weft::task<void> { co_await weft::sleep_until(t); }(until));
      } catch (const weft::injected_fault&) {
        // The sleep's task was ended by the fault plan: sleep the rest.
      }
    }
  };
  const weft::instant window_end = sim.now() + fault_window;
  for (std::int64_t f = 0; f < faults && sim.now() < window_end; ++f) {
    pause(duration(static_cast<duration::rep>(sim.pick(0, static_cast<std::uint64_t>(fault_window.count() / faults)))));
    const auto length = duration(static_cast<duration::rep>(sim.pick(0, fault_length_max.count())));
    const weft::sim::host& peer = client_hosts[sim.pick(0, client_hosts.size() - 1)];
    switch (sim.pick(0, 4)) {
      case 0:
        sim.crash(*kv);
        pause(length);
        boot();
        break;
      case 4:
        sim.shutdown(*kv);
        pause(length);
        boot();
        break;
      case 1:
        sim.partition(*kv, peer);
        pause(length);
        sim.repair(*kv, peer);
        break;
      case 2:
        sim.hold(*kv, peer);
        pause(length);
        sim.release(*kv, peer);
        break;
      default:
        sim.reset_connections(*kv, peer);
        break;
    }
  }

  if (sim.now() < window_end) pause(window_end - sim.now());
  sim.shutdown(*kv);
  boot();
  for (auto& t : threads) t.join();
  bool all_finished = true;
  for (std::size_t c = 0; c < runs.size(); ++c) {
    for (const std::string& w : runs[c].wrong) sim.fail("client-" + std::to_string(c + 1) + ": " + w);
    all_finished = all_finished && runs[c].finished;
  }
  if (all_finished) sim.recovered();
  sim.shutdown(*kv);
}
WEFT_SIM_SCENARIO_DOC(kv_crash_recovery,
                      "the key-value example's server on a host that crashes, restarts and is partitioned from its "
                      "clients; no acknowledged write may be lost");
WEFT_SIM_SCENARIO_KNOBS(kv_crash_recovery,
                        {{"clients", 1, clients_max, "client hosts, each with one client loop"},
                         {"requests", 1, requests_max, "PUTs and GETs each client sends before its last sweep of GETs"},
                         {"faults", 0, faults_max, "crashes, restarts, partitions, holds and resets in the fault window"},
                         {"ack_before_fsync", 0, 1, "1: the known-bad server that acknowledges before fdatasync"}});
