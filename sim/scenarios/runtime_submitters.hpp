// runtime_submitters — the runtime start every runtime scenario uses, and the submitter threads
// and five ways of submitting that shutdown_race and drain_race share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/scheduler.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::scenarios {

// Builds the runtime `builder` describes into `rt`; returns false, with a note, when it did not
// start (an injected worker_start_failure): the run then has nothing to check.
inline bool start_runtime(context& sim, const runtime::builder& builder, std::optional<runtime>& rt,
                          const std::string& scenario) {
  try {
    rt.emplace(builder.build());
  } catch (const start_error& e) {
    sim.note(scenario + ": runtime did not start: " + e.what());
    return false;
  }
  return true;
}

// The ways a submission is made, by the seeded draw `how` in [0, submit_ways_max].
inline constexpr std::uint64_t submit_ways_max = 9;       // 8-9: spawn_blocking
inline constexpr std::uint64_t submit_ways_no_blocking = 7;  // a draw in [0, 7] never blocks

// Submits one piece of work the way `how` names: 0-2 `spawn`, 3-4 `spawn_anywhere`, 5-6 a pinned
// worker's scheduler, 7 `spawn_everywhere` (one task per worker; worker i's id is the first id
// plus i), 8-9 `spawn_blocking`. make_task(id) is the task of submission `id` (called on the
// worker that runs it), make_blocking(id) the blocking callback; record(id, handle) gets every
// handle. Ids come from `next_id`.
template <class MakeTask, class MakeBlocking, class Record>
void submit_one_way(context& sim, std::uint64_t how, std::uint64_t& next_id, scheduler& sched,
                    std::vector<scheduler>& pinned, const MakeTask& make_task, const MakeBlocking& make_blocking,
                    const Record& record) {
  auto factory_for = [&make_task](std::uint64_t id) { return [make_task, id] { return make_task(id); }; };
  if (how <= 2) {
    const std::uint64_t id = next_id++;
    record(id, sched.spawn(factory_for(id)));
  } else if (how <= 4) {
    const std::uint64_t id = next_id++;
    record(id, sched.spawn_anywhere(factory_for(id)));
  } else if (how <= 6) {
    const std::uint64_t id = next_id++;
    record(id, pinned[sim.pick(0, pinned.size() - 1)].spawn(factory_for(id)));
  } else if (how == 7) {
    const std::uint64_t first = next_id;
    next_id += pinned.size();
    auto handles = sched.spawn_everywhere([make_task, first] { return make_task(first + builtins::current().worker().index); });
    for (std::size_t i = 0; i < handles.size(); ++i) record(first + i, std::move(handles[i]));
  } else {
    const std::uint64_t id = next_id++;
    record(id, sched.spawn_blocking(make_blocking(id)));
  }
}

// Starts `threads` submitter threads named submitter-<t>; thread t makes submissions t,
// t + threads, ... below `count`, calling submit(t, its scheduler, its pinned schedulers) for
// each and then pause(), and counts itself in `done` when it ends. The schedulers are copied
// here: the main thread may stop (and so empty) the runtime while submitters still run.
template <class Submit, class Pause>
std::vector<platform::thread> start_submitters(context& sim, std::size_t threads, std::size_t count,
                                               const scheduler& sched, const std::vector<scheduler>& pinned,
                                               std::uint64_t& done, Submit submit, Pause pause) {
  std::vector<platform::thread> submitters;
  for (std::size_t t = 0; t < threads; ++t) {
    submitters.push_back(sim.start_thread([&sim, &done, sched = scheduler(sched), pinned = std::vector<scheduler>(pinned), submit, pause, t,
                                                 threads, count]() mutable {
      sim.name_thread("submitter-" + std::to_string(t));
      for (std::size_t k = t; k < count; k += threads) {
        submit(t, sched, pinned);
        pause();
      }
      ++done;
    }));
  }
  return submitters;
}

}  // namespace weft::sim::scenarios
