// inbox_overflow — producers hammer a small-capacity loop inbox while the loop's run() keeps
// finishing (and so closing the inbox) and starting again.
//
// Each submission — a macrotask, or (every other one) a task spawned from the producer's thread
// through a local_spawner — is answered accepted, `full` or `closed`. Oracle (submissions.hpp):
// every accepted macrotask or task ran exactly once; every refused one never ran. The loop's thread runs
// `rounds` drives, yielding between them, then joins the producers and drives once more:
// the inbox's close commit guarantees that an accepted item is run before run() returns, which
// run_return.hpp checks after every run(): whatever a producer had seen accepted by then has run.
//
// Variant `stranded` (test-only, proves the oracle can fail): the loop drains with
// run_until_stalled() — which never commits a close — and is destroyed while producers still
// submit, so items accepted after the last drain are destroyed unrun.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/local_domain.hpp>
#include <weft/task.hpp>
#include <weft/platform/thread.hpp>
#include <weft/queue_error.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/run_return.hpp>
#include <weft/sim/oracles/submissions.hpp>

namespace weft::sim::scenarios {

enum class inbox_overflow_variant { correct, stranded };

template <inbox_overflow_variant Variant>
void inbox_overflow(context& sim) {
  const auto capacity = static_cast<std::size_t>(sim.param("capacity", static_cast<std::int64_t>(sim.pick(1, 4))));
  const auto producers = static_cast<std::size_t>(sim.param("producers", static_cast<std::int64_t>(sim.pick(2, 4))));
  const auto items = static_cast<std::size_t>(sim.param("items", static_cast<std::int64_t>(sim.pick(4, 16))));
  const auto rounds = static_cast<std::size_t>(sim.param("rounds", static_cast<std::int64_t>(sim.pick(1, 4))));

  oracles::submission_ledger ledger;
  oracles::run_return_ledger returns(sim);
  event_loop::options loop_options;
  loop_options.inbox_capacity = capacity;
  std::optional<event_loop> loop(std::in_place, loop_options);
  thread_handle handle = loop->handle();
  local_spawner spawner(handle);

  std::vector<platform::thread> threads;
  for (std::size_t p = 0; p < producers; ++p) {
    threads.push_back(sim.start_thread([&, p] {
      sim.name_thread("producer-" + std::to_string(p));
      for (std::size_t k = 0; k < items; ++k) {
        const std::uint64_t id = p * 1'000 + k;
        submit_result r;
        if (k % 2 == 0) {
          r = handle.queue_macrotask([&ledger, &returns, id] {
            ledger.ran(id);
            returns.ran(id);
          });
        } else {
          // A cross-thread task spawn through the same inbox: refused spawns (`full`, `closed`)
          // complete at once as rejected and must never run their task.
          join_handle<void> h = spawner.spawn([&ledger, &returns, id]() -> task<void> {
            ledger.ran(id);
            returns.ran(id);
            co_return;
          });
          if (h.is_finished()) {
            auto outcome = h.join();  // finished: does not block
            if (!outcome && outcome.error() == join_error::rejected) r = unexpected(outcome.error().rejection_reason());
          }
          // An accepted task runs on the loop's thread at a later drive; its handle detaches.
        }
        if (r) {
          ledger.accepted(id);
          returns.accepted(id);
        } else {
          ledger.refused(id, r.error());
          platform::yield_thread();  // back off: let the loop drain
        }
      }
    }));
  }

  for (std::size_t r = 0; r < rounds; ++r) {
    if constexpr (Variant == inbox_overflow_variant::correct) {
      loop->run();
      returns.check_after_run(r);  // no scheduling point since run() returned
    } else {
      loop->run_until_stalled();  // BUG (test-only): drains without committing a close
    }
    platform::yield_thread();
  }
  if constexpr (Variant == inbox_overflow_variant::correct) {
    for (auto& t : threads) t.join();
    loop->run();  // whatever was accepted since the last drive
    returns.check_after_run(rounds);
    loop.reset();
  } else {
    loop.reset();  // BUG (test-only): destroyed while producers still submit
    for (auto& t : threads) t.join();
  }

  ledger.check(sim);
  sim.note("inbox_overflow: " + std::to_string(ledger.count_accepted()) + " accepted, " +
           std::to_string(ledger.count_refused()) + " refused");
}

// The knobs inbox_overflow reads and their accepted ranges (it and its known-bad variants declare
// these with WEFT_SIM_SCENARIO_KNOBS).
inline std::vector<knob> inbox_overflow_knobs() {
  return {
      {"capacity", 1, 4096, "inbox capacity"},
      {"producers", 1, 64, "producer threads"},
      {"items", 1, 1000, "submissions per producer (ids are producer * 1000 + item)"},
      {"rounds", 1, 1000, "rounds of run()"},
  };
}

}  // namespace weft::sim::scenarios
