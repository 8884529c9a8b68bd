// sim_user_scenario.cpp — a user's own simulator scenario, written against weft's public API,
// fuzzed with the same CLI as the built-in ones:
//
//   my-sim list
//   my-sim fuzz --scenario counter_handoff --seeds 100000 --jobs 2
//   my-sim replay --scenario counter_handoff --seed 17 --chrome-trace trace.json
//
// The scenario: a runtime of 2 workers; `producers` tasks spread with spawn_anywhere each add to
// a counter owned by a local_domain on the main thread, through its spawner; the host drives the
// domain until every producer finished. The check: the counter equals the number of accepted
// dispatches, whatever the interleaving. The build links this file with weft_sim_cli_dep, which
// brings the CLI's main().
#include <cstdint>
#include <memory>
#include <vector>

#include <weft/platform/parker.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/weft.hpp>

WEFT_SIM_SCENARIO(counter_handoff)(weft::sim::context& sim) {
  using namespace std::chrono_literals;
  const auto producers = sim.param("producers", static_cast<std::int64_t>(sim.pick(1, 6)));

  weft::local_domain host;                // owned by this (simulated) thread
  auto counter = std::make_shared<int>(0);  // touched only on the host thread
  auto accepted = std::make_shared<int>(0);

  auto rt = weft::runtime::builder().workers(2).build();
  std::vector<weft::join_handle<int>> handles;
  for (std::int64_t i = 0; i < producers; ++i) {
    handles.push_back(rt.scheduler().spawn_anywhere([spawner = host.spawner(), counter]() -> weft::task<int> {
      co_await weft::sleep(1ms);  // virtual time: costs nothing in wall time
      const bool sent = static_cast<bool>(spawner.dispatch([counter] { ++*counter; }));
      co_return sent ? 1 : 0;
    }));
  }
  // Drive the host domain once per "frame" until every producer has finished, then once more to
  // drain. Between frames the host blocks until the next frame is due (a vsync stand-in). It
  // must block, not spin: virtual time only moves when every simulated thread is blocked, so a
  // spinning host would never let the producers' sleeps end.
  weft::platform::parker frame_clock;
  for (;;) {
    bool all_done = true;
    for (auto& h : handles) all_done = all_done && h.is_finished();
    (void)host.run_for(1ms);
    if (all_done) break;
    (void)frame_clock.park_until(weft::platform::clock::now() + 16ms);
  }
  (void)host.run_for(1ms);
  for (auto& h : handles) {
    auto r = h.join();
    if (!r) sim.fail("a producer did not finish with a value");
    else *accepted += *r;
  }
  if (*counter != *accepted) sim.fail("the counter lost or duplicated a dispatch");
  if (!std::move(rt).stop().is_complete()) sim.fail("the runtime had work left at stop");
}
WEFT_SIM_SCENARIO_DOC(counter_handoff, "runtime workers dispatch into a host-driven local_domain");
WEFT_SIM_SCENARIO_KNOBS(counter_handoff, {{"producers", 1, 64, "tasks dispatching into the host domain"}});
