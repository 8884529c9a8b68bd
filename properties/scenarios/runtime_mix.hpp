// runtime_mix — a registered scenario of the schedule properties: producers on their own
// threads place value, sleeper and parked tasks on the workers of a runtime, some tasks are
// aborted, then the runtime stops. Every count is a knob (`--param`), so a rapidcheck case maps
// to one `weft-prop-sim replay --scenario runtime_mix --seed S --param ...` command.
//
// Oracles (checkers only; see sim/include/weft/sim/oracles/):
//   * outcomes (outcome_ledger): every admitted task reaches exactly one terminal outcome, the
//     expected one — `ok` for tasks joined before the stop, `cancelled` for aborted parked ones;
//   * no stranding: every task still unfinished at the stop ends `cancelled` (its handle says
//     so) and its frame is destroyed; refused submissions never run their factory;
//   * no early timer (timer_ledger, virtual time);
//   * no migration: a task resumes on the worker it first ran on;
//   * ordering: tasks one producer places on one worker start in submission order.
//
// Variants (test-only, prove the oracles can fail): `early_timer` sleeps 1 ms less than the
// deadline it reports to the timer oracle; `lost_wake` checks a parked task's gate outside its
// lock, so a wake landing between the check and the publish is lost (the join never returns:
// the simulator reports a deadlock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/outcomes.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

namespace weft::properties::scenarios {

enum class runtime_mix_variant { correct, early_timer, lost_wake };

struct mix_gate {
  sync::mutex lock;
  sync::cell<bool> open{false};
  sync::cell<waker> stored;
  sync::atomic<bool> flag{false};  // read without the lock only by the lost_wake variant
};

template <runtime_mix_variant Variant>
class mix_gate_leaf {
 public:
  explicit mix_gate_leaf(mix_gate& g) noexcept : gate_(g) {}
  bool poll_ready(const waker& w) {
    if constexpr (Variant == runtime_mix_variant::lost_wake) {
      // BUG (test-only): check and publish are two steps.
      // acquire: pairs with the release store in open_gate.
      if (gate_.flag.load(std::memory_order_acquire)) return true;
      platform::yield_thread();  // widens the window (the bug exists without it)
      sync::lock_guard<sync::mutex> hold(gate_.lock);
      gate_.stored.with_mut([&](waker& s) { s = w; });
      return false;
    } else {
      sync::lock_guard<sync::mutex> hold(gate_.lock);
      if (gate_.open.with([](const bool& o) { return o; })) return true;
      gate_.stored.with_mut([&](waker& s) {
        if (!s.will_wake(w)) s = w;
      });
      return false;
    }
  }
  void await_resume() const noexcept {}

 private:
  mix_gate& gate_;
};

inline void open_gate(mix_gate& g) {
  // release: pairs with the acquire load of the lost_wake variant's leaf.
  g.flag.store(true, std::memory_order_release);
  waker w;
  {
    sync::lock_guard<sync::mutex> hold(g.lock);
    g.open.with_mut([](bool& o) { o = true; });
    g.stored.with([&](const waker& s) { w = s; });
  }
  std::move(w).wake();
}

struct mix_record {
  std::uint64_t id = 0;
  std::size_t producer = 0;
  std::uint64_t sequence = 0;  // within its producer
  bool factory_ran = false;
  bool frame_destroyed = false;
  std::optional<std::size_t> worker;
  bool migrated = false;
  std::uint64_t start_order = 0;  // global order of first polls
};

inline std::optional<std::size_t> mix_worker_here() {
  const builtins* b = builtins::try_current();
  if (b == nullptr) return std::nullopt;
  return b->worker().index;
}

template <runtime_mix_variant Variant>
void runtime_mix(sim::context& sim) {
  const auto workers = static_cast<std::size_t>(sim.param("workers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto producers = static_cast<std::size_t>(sim.param("producers", static_cast<std::int64_t>(sim.pick(1, 3))));
  const auto values = static_cast<std::size_t>(sim.param("values", static_cast<std::int64_t>(sim.pick(0, 4))));
  const auto sleepers = static_cast<std::size_t>(sim.param("sleepers", static_cast<std::int64_t>(sim.pick(0, 3))));
  const auto parked = static_cast<std::size_t>(sim.param("parked", static_cast<std::int64_t>(sim.pick(0, 3))));
  const auto aborts = static_cast<std::size_t>(sim.param("aborts", static_cast<std::int64_t>(sim.pick(0, 2))));
  const auto leftovers = static_cast<std::size_t>(sim.param("leftovers", static_cast<std::int64_t>(sim.pick(0, 2))));

  sim::oracles::outcome_ledger outcomes(sim);
  sim::oracles::timer_ledger timers(sim);
  std::uint64_t start_counter = 0;

  auto rt = runtime::builder().workers(workers).build();
  // Per producer: its records and handles, in submission order. Kinds: value, sleeper, parked
  // (opened by the producer before it joins), abort-parked (never opened, aborted), leftover
  // (parked, never opened, cut short by the stop).
  enum class kind { value, sleeper, parked, aborted, leftover };
  struct item {
    kind k;
    std::unique_ptr<mix_record> rec;
    std::unique_ptr<mix_gate> gate;
    join_handle<std::uint64_t> handle;
  };
  std::vector<std::vector<item>> per_producer(producers);
  std::uint64_t next_id = 1;
  for (std::size_t p = 0; p < producers; ++p) {
    auto add = [&](kind k, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        item it{k, std::make_unique<mix_record>(), std::make_unique<mix_gate>(), {}};
        it.rec->id = next_id++;
        it.rec->producer = p;
        it.rec->sequence = per_producer[p].size();
        per_producer[p].push_back(std::move(it));
      }
    };
    add(kind::value, values);
    add(kind::sleeper, sleepers);
    add(kind::parked, parked);
    add(kind::aborted, aborts);
    add(kind::leftover, leftovers);
  }

  auto make_factory = [&](item& it) {
    mix_record* r = it.rec.get();
    mix_gate* g = it.gate.get();
    const kind k = it.k;
    return [r, g, k, &timers, &start_counter]() -> task<std::uint64_t> {
      r->factory_ran = true;
      r->worker = mix_worker_here();
      r->start_order = ++start_counter;
      struct guard_t {
        mix_record* r;
        sim::oracles::timer_ledger* timers;
        bool armed = false;
        bool fired = false;
        ~guard_t() {
          r->frame_destroyed = true;
          if (armed && !fired) timers->cancelled(r->id);
        }
      } guard{r, &timers};
      if (k == kind::sleeper) {
        const instant deadline = platform::clock::now() + std::chrono::milliseconds(1 + r->id % 3);
        timers.armed(r->id, deadline);
        guard.armed = true;
        if constexpr (Variant == runtime_mix_variant::early_timer) {
          co_await weft::sleep_until(deadline - std::chrono::milliseconds(1));  // BUG (test-only)
        } else {
          co_await weft::sleep_until(deadline);
        }
        guard.fired = true;
        timers.fired(r->id, platform::clock::now());
      } else if (k != kind::value) {
        co_await mix_gate_leaf<Variant>(*g);
      }
      if (mix_worker_here() != r->worker) r->migrated = true;
      co_return r->id;
    };
  };

  // Producers place their tasks on worker (sequence % workers), open their parked tasks' gates,
  // abort the ones to abort; the driver joins them.
  std::vector<platform::thread> threads;
  for (std::size_t p = 0; p < producers; ++p) {
    threads.push_back(sim.start_thread([&, p] {
      sim.name_thread("producer-" + std::to_string(p));
      for (auto& it : per_producer[p]) {
        it.handle = rt.worker_scheduler(it.rec->sequence % workers).spawn(make_factory(it));
        const bool admitted = !it.handle.is_finished() || it.rec->factory_ran;
        if (it.k == kind::value || it.k == kind::sleeper || it.k == kind::parked) {
          if (admitted) outcomes.admitted(it.rec->id, "ok");
        } else if (it.k == kind::aborted) {
          if (admitted) outcomes.admitted(it.rec->id, "cancelled");
        }
        if (!admitted && it.rec->factory_ran) sim.fail("a refused factory ran");
      }
      for (auto& it : per_producer[p]) {
        if (it.k == kind::parked) open_gate(*it.gate);
        if (it.k == kind::aborted) it.handle.abort();
      }
    }));
  }
  for (auto& t : threads) t.join();

  // Join everything that can finish (value, sleeper, parked, aborted) from the driver.
  for (auto& list : per_producer) {
    for (auto& it : list) {
      if (it.k == kind::leftover) continue;
      auto result = it.handle.join();
      outcomes.terminal(it.rec->id, result ? std::string("ok") : std::string(to_string(result.error().get_kind())));
    }
  }
  const stop_outcome out = std::move(rt).stop();
  std::size_t leftovers_cancelled = 0;
  for (auto& list : per_producer) {
    for (auto& it : list) {
      if (it.k != kind::leftover) continue;
      if (!it.handle.is_finished()) {
        sim.fail("stranded: leftover task " + std::to_string(it.rec->id) + " unfinished after stop()");
        continue;
      }
      auto result = it.handle.join();
      if (result || !result.error().is_cancelled()) {
        sim.fail("leftover task " + std::to_string(it.rec->id) + " did not end cancelled");
      } else {
        ++leftovers_cancelled;
      }
    }
  }
  if (leftovers_cancelled > 0 && !out.is_incomplete()) sim.fail("stop() cut tasks short but reported complete");
  if (out.counts().tasks_cancelled < leftovers_cancelled) {
    sim.fail("stop_outcome counts " + std::to_string(out.counts().tasks_cancelled) + " cancelled tasks, " +
             std::to_string(leftovers_cancelled) + " leftovers were cancelled");
  }
  // Per-task oracles.
  std::map<std::pair<std::size_t, std::size_t>, std::uint64_t> last_start;  // (producer, worker)
  for (auto& list : per_producer) {
    for (auto& it : list) {
      const mix_record& r = *it.rec;
      if (r.factory_ran && !r.frame_destroyed) sim.fail("task " + std::to_string(r.id) + "'s frame never destroyed");
      if (r.migrated) sim.fail("task " + std::to_string(r.id) + " migrated between workers");
      if (!r.factory_ran) continue;
      if (r.worker != std::optional<std::size_t>(r.sequence % workers)) {
        sim.fail("task " + std::to_string(r.id) + " ran on the wrong worker");
      }
      auto& last = last_start[{r.producer, r.sequence % workers}];
      if (r.start_order < last) sim.fail("ordering: task " + std::to_string(r.id) + " started before an earlier one");
      last = r.start_order;
    }
  }
  outcomes.check();
  timers.check();
}

// The knobs runtime_mix reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<sim::knob> runtime_mix_knobs() {
  return {
      {"workers", 1, 64, "runtime workers"},
      {"producers", 1, 64, "producer threads"},
      {"values", 0, 1000, "value tasks per producer"},
      {"sleepers", 0, 1000, "sleeping tasks per producer"},
      {"parked", 0, 1000, "parked tasks per producer"},
      {"aborts", 0, 1000, "tasks aborted per producer"},
      {"leftovers", 0, 1000, "tasks left running at stop per producer"},
  };
}

}  // namespace weft::properties::scenarios
