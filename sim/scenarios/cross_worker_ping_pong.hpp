// cross_worker_ping_pong — pairs of tasks pinned to different workers pass a ball back and forth.
//
// Each pair: `ping` on worker i and `pong` on worker j != i exchange a counter through two
// one-slot mailboxes (a leaf: the sender stores the value and wakes the receiver's waker from
// its own worker — a cross-worker wake). Some rounds ping also spawns a child on pong's worker
// and awaits its join handle (a cross-worker completion wake). The main thread joins every
// handle, then stops the runtime.
//
// Oracles (oracles/tasks.hpp): every task ends ok exactly once; every resume happens on the
// thread the task started on (a wake only schedules a poll on the owner); each ping receives
// exactly its ball + 1. A lost cross-worker wake is a deadlock.
//
// Knobs: workers (2..4), pairs (1..3), rounds (2..8).
//
// Variant `migrate` (test-only, proves the worker-affinity oracle can fail): pong moves its
// second half to another worker by re-spawning itself there under the same identity — what a
// runtime that migrates tasks would look like to the oracle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/tasks.hpp>
#include <weft/task.hpp>
#include <weft/waker.hpp>

#include "runtime_submitters.hpp"

namespace weft::sim::scenarios {

enum class ping_pong_variant { correct, migrate };

// A one-slot mailbox between two tasks on different workers.
struct mailbox {
  struct guarded {
    std::uint64_t value = 0;
    bool full = false;
    waker receiver;
  };
  sync::mutex lock;
  sync::cell<guarded> state;
};

class receive_leaf {
 public:
  explicit receive_leaf(mailbox& box) noexcept : box_(box) {}
  bool poll_ready(const waker& w) {
    sync::lock_guard<sync::mutex> hold(box_.lock);
    return box_.state.with_mut([&](mailbox::guarded& g) {
      if (g.full) {
        g.full = false;
        value_ = g.value;
        return true;
      }
      if (!g.receiver.will_wake(w)) g.receiver = w;
      return false;
    });
  }
  std::uint64_t await_resume() const noexcept { return value_; }

 private:
  mailbox& box_;
  std::uint64_t value_ = 0;
};

inline void send(mailbox& box, std::uint64_t value) {
  waker to_wake;
  {
    sync::lock_guard<sync::mutex> hold(box.lock);
    box.state.with_mut([&](mailbox::guarded& g) {
      g.value = value;
      g.full = true;
      to_wake = std::move(g.receiver);
    });
  }
  std::move(to_wake).wake();  // outside the lock, from the sender's worker; used up (by value)
}

struct ping_pong_pair {
  mailbox to_pong;
  mailbox to_ping;
  std::size_t ping_worker = 0;
  std::size_t pong_worker = 0;
  std::uint64_t ping_id = 0;
  std::uint64_t pong_id = 0;
};

inline std::uint64_t current_thread() noexcept { return platform::current_thread_id(); }

// A task that throws (an injected fault) leaves its partner waiting for a ball forever: it
// stops the runtime on its way out, so the partner is cancelled instead.
inline task<std::uint64_t> stop_on_panic(task<std::uint64_t> inner) {
  try {
    co_return co_await std::move(inner);
  } catch (...) {
    builtins::current().operations().request_stop();
    throw;
  }
}

inline task<std::uint64_t> ping_child(oracles::task_ledger* ledger, std::uint64_t id, std::uint64_t value) {
  ledger->started(id, current_thread());
  ledger->finished(id);
  co_return value;
}

template <ping_pong_variant Variant>
task<std::uint64_t> pong_rounds(oracles::task_ledger* ledger, ping_pong_pair* p, std::uint64_t from,
                                std::uint64_t rounds, std::vector<scheduler>* workers) {
  for (std::uint64_t r = from; r < rounds; ++r) {
    const std::uint64_t ball = co_await receive_leaf(p->to_pong);
    ledger->resumed(p->pong_id, current_thread());
    send(p->to_ping, ball + 1);
    if constexpr (Variant == ping_pong_variant::migrate) {
      if (r == rounds / 2 && workers->size() > 1) {
        // BUG (test-only): "continue elsewhere" under the same identity.
        const std::size_t other = (p->pong_worker + 1) % workers->size();
        auto rest = (*workers)[other].spawn([ledger, p, r, rounds, workers] {
          return pong_rounds<ping_pong_variant::correct>(ledger, p, r + 1, rounds, workers);
        });
        auto done = co_await rest;
        co_return done ? *done : 0;
      }
    }
  }
  ledger->finished(p->pong_id);
  co_return rounds;
}

// The pong side of a pair, started on its worker.
template <ping_pong_variant Variant>
task<std::uint64_t> pong_task(oracles::task_ledger* ledger, ping_pong_pair* pp, std::uint64_t n,
                              std::vector<scheduler>* ws) {
  ledger->started(pp->pong_id, current_thread());
  co_return co_await stop_on_panic(pong_rounds<Variant>(ledger, pp, 0, n, ws));
}

// The ping side of a pair: n rounds of send and receive; with `children`, each round also spawns
// a child on the pong's worker and awaits it through its handle. Returns the rounds it counted.
inline task<std::uint64_t> ping_rounds(oracles::task_ledger* ledger, ping_pong_pair* pp, std::uint64_t n,
                                       std::uint64_t base, bool children, std::vector<scheduler>* ws) {
  ledger->started(pp->ping_id, current_thread());
  std::uint64_t got_total = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    send(pp->to_pong, 2 * r);
    const std::uint64_t back = co_await receive_leaf(pp->to_ping);
    ledger->resumed(pp->ping_id, current_thread());
    if (back != 2 * r + 1) co_return 0;  // the caller checks the total
    got_total += 1;
    if (children) {
      const std::uint64_t cid = base + r;
      oracles::task_ledger::awaiting guard{ledger, cid};
      auto h = (*ws)[pp->pong_worker].spawn([ledger, cid, r] { return ping_child(ledger, cid, r); });
      auto result = co_await h;
      guard.settled = true;
      ledger->resumed(pp->ping_id, current_thread());
      const auto kind = oracles::task_ledger::kind_of(result);
      ledger->answered(cid, kind.text != "rejected");
      ledger->outcome(cid, kind);
    }
  }
  ledger->finished(pp->ping_id);
  co_return got_total;
}

// A pinned task's handle, or the outcome it had at once (see spawn_pinned).
struct ping_pong_spawned {
  std::uint64_t id;
  join_handle<std::uint64_t> handle;
  std::optional<oracles::task_ledger::expected_kind> early;
};

// Spawns a pinned task. A refusal (an injected `full`) is retried; a task that is finished at once
// for another reason (it panicked on its first poll) leaves its partner waiting forever, so the
// runtime is stopped and the partner cancelled.
template <class F>
void spawn_pinned(std::vector<ping_pong_spawned>& handles, runtime& rt, std::uint64_t id, scheduler& on, F factory) {
  for (int attempt = 0;; ++attempt) {
    join_handle<std::uint64_t> h = on.spawn(factory);
    if (!h.is_finished() || attempt == 100) {
      handles.push_back({id, std::move(h), std::nullopt});
      return;
    }
    auto early = h.join();
    if (!early && early.error().is_rejected()) {
      platform::yield_thread();
      continue;
    }
    handles.push_back({id, join_handle<std::uint64_t>::rejected(), std::nullopt});
    handles.back().early = oracles::task_ledger::kind_of(early);
    rt.request_stop();
    return;
  }
}

// Joins every pinned task, judging its outcome and its count of rounds; returns true when one
// did not finish ok (so the stop may have had work to cut short).
inline bool join_ping_pong(context& sim, oracles::task_ledger& ledger, std::vector<ping_pong_spawned>& handles,
                           std::uint64_t rounds) {
  bool stopped_early = false;
  for (auto& [id, h, early] : handles) {
    if (early) {
      ledger.answered(id, true);
      ledger.outcome(id, *early);
      stopped_early = true;
      continue;
    }
    auto result = h.join();
    const auto kind = oracles::task_ledger::kind_of(result);
    ledger.answered(id, kind.text != "rejected");
    ledger.outcome(id, kind);
    if (!result) stopped_early = true;
    if (result && *result != rounds) {
      sim.fail("ping_pong: task " + std::to_string(id) + " counted " + std::to_string(*result) + " of " +
               std::to_string(rounds) + " rounds");
    }
  }
  return stopped_early;
}

template <ping_pong_variant Variant>
void cross_worker_ping_pong(context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(2, 4))));
  const auto pairs = static_cast<std::size_t>(sim.param("pairs", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto rounds = static_cast<std::uint64_t>(sim.param("rounds", static_cast<std::int64_t>(sim.pick(2, 8))));
  oracles::task_ledger ledger(sim);
  ledger.allow_panics(sim.opts().faults.rate_ppm[static_cast<std::size_t>(platform::fault::task_exception)] > 0);

  std::optional<runtime> rt;
  if (!start_runtime(sim, runtime::builder().workers(workers), rt, "cross_worker_ping_pong")) return;
  std::vector<scheduler> pinned;
  for (std::size_t i = 0; i < workers; ++i) pinned.push_back(rt->worker_scheduler(i));

  // The pairs, each on two different workers.
  std::vector<std::unique_ptr<ping_pong_pair>> all;
  std::vector<ping_pong_spawned> handles;
  std::uint64_t next_id = 1;
  for (std::size_t k = 0; k < pairs; ++k) {
    auto p = std::make_unique<ping_pong_pair>();
    p->ping_worker = sim.pick(0, workers - 1);
    p->pong_worker = (p->ping_worker + sim.pick(1, workers - 1)) % workers;
    p->ping_id = next_id++;
    p->pong_id = next_id++;
    const std::uint64_t child_base = next_id;
    next_id += rounds;
    ping_pong_pair* raw = p.get();
    const bool with_children = sim.chance(1, 2);
    spawn_pinned(handles, *rt, raw->pong_id, pinned[raw->pong_worker],
                 [l = &ledger, raw, rounds, w = &pinned] { return pong_task<Variant>(l, raw, rounds, w); });
    spawn_pinned(handles, *rt, raw->ping_id, pinned[raw->ping_worker],
                 [l = &ledger, raw, rounds, child_base, with_children, w = &pinned] {
                   return stop_on_panic(ping_rounds(l, raw, rounds, child_base, with_children, w));
                 });
    all.push_back(std::move(p));
  }

  const bool stopped_early = join_ping_pong(sim, ledger, handles, rounds);
  const stop_outcome out = std::move(*rt).stop();
  if (!out.is_complete() && !stopped_early && !sim.failed()) sim.fail("ping_pong: stop() after every task finished was not complete");
  ledger.check();
}

// The knobs cross_worker_ping_pong reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> cross_worker_ping_pong_knobs() {
  return {
      {"workers", 2, 64, "runtime workers (pairs span two)"},
      {"pairs", 1, 64, "ping-pong task pairs"},
      {"rounds", 1, 10'000, "round trips per pair"},
  };
}

}  // namespace weft::sim::scenarios
