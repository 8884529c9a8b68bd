// Task-level events in the trace (weft/platform/trace.hpp): what the runtime's trace points put in
// the text trace and in the Chrome Trace Event JSON, that they are deterministic, and that they
// are not scheduling points.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <weft/platform/trace.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/sim/trace.hpp>

namespace {

using weft::platform::task_event;
using weft::sim::event_kind;
using weft::sim::trace_event;
using json = nlohmann::json;

const weft::sim::scenario& named(const char* name) {
  const weft::sim::scenario* s = weft::sim::registry::global().find(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

weft::sim::run_result recorded_run(const char* name, std::uint64_t seed) {
  weft::sim::options o;
  o.record_trace = true;
  return weft::sim::run(named(name), seed, o);
}

bool is(const trace_event& e, task_event what) {
  return e.kind == event_kind::task && static_cast<task_event>(e.value) == what;
}

json chrome_of(const weft::sim::run_result& r) {
  std::ostringstream out;
  weft::sim::write_chrome(out, r.events, r.fiber_names);
  return json::parse(out.str());  // throws (fails the test) on invalid JSON
}

// The scenarios and seeds the structural checks run over: remote spawns, shutdown cancellation,
// cross-worker wakes (flow arrows), local wakes with duplicate and spurious wakes, timers.
// (shutdown_race seed 6 has a coalesced wake; a yield never coalesces, see task_harness.hpp. Seeds
// name interleavings: a change to the runtime's scheduling points moves such events to other
// seeds.)
const std::vector<std::pair<const char*, std::uint64_t>> cases = {
    {"shutdown_race", 1},       {"shutdown_race", 2},  {"shutdown_race", 3},  {"shutdown_race", 6},
    {"cross_worker_ping_pong", 7},
    {"wake_storm", 2},          {"timer_storm", 4},    {"local_domain_dispatch", 5},
};

TEST(task_trace, the_text_trace_has_polls_wakes_and_completions_with_outcomes) {
  std::map<std::string, int> seen;
  for (const auto& [name, seed] : cases) {
    const auto r = recorded_run(name, seed);
    ASSERT_TRUE(r.passed) << name << " seed " << seed;
    for (const auto& e : r.events) {
      if (e.kind != event_kind::task) continue;
      ++seen[e.op];
      EXPECT_GT(e.task, 0u) << e.line;
      EXPECT_NE(e.line.find(" task f="), std::string::npos) << e.line;
      if (is(e, task_event::completed)) {
        EXPECT_TRUE(e.detail == "value" || e.detail == "panicked" || e.detail == "cancelled" || e.detail == "rejected")
            << e.line;
      }
      if (is(e, task_event::poll_end)) {
        EXPECT_TRUE(e.detail == "suspended" || e.detail == "completed") << e.line;
      }
    }
  }
  for (const char* required : {"spawned", "adopted", "woken", "wake_coalesced", "poll_begin", "poll_end", "outcome",
                               "cancelled_at_shutdown", "completed"}) {
    EXPECT_GT(seen[required], 0) << "no `" << required << "` event in any case";
  }
}

TEST(task_trace, every_poll_begin_has_its_end_on_the_same_fiber_and_every_task_completes_once) {
  for (const auto& [name, seed] : cases) {
    const auto r = recorded_run(name, seed);
    ASSERT_TRUE(r.passed) << name << " seed " << seed;
    std::map<std::uint64_t, std::vector<std::uint64_t>> open;  // fiber -> tasks being polled
    std::map<std::uint64_t, int> completions;                  // task -> completed events
    std::set<std::uint64_t> tasks;
    for (const auto& e : r.events) {
      if (e.kind != event_kind::task) continue;
      tasks.insert(e.task);
      if (is(e, task_event::poll_begin)) {
        EXPECT_EQ(completions[e.task], 0) << "poll after completion: " << e.line;
        open[e.fiber].push_back(e.task);
      } else if (is(e, task_event::poll_end)) {
        ASSERT_FALSE(open[e.fiber].empty()) << name << " seed " << seed << ": " << e.line;
        EXPECT_EQ(open[e.fiber].back(), e.task) << e.line;
        open[e.fiber].pop_back();
      } else if (is(e, task_event::completed)) {
        ++completions[e.task];
      }
    }
    for (const auto& [fiber, polls] : open) EXPECT_TRUE(polls.empty()) << name << ": fiber " << fiber;
    // The scenarios settle every task before they end: each one completed exactly once.
    for (const std::uint64_t t : tasks) EXPECT_EQ(completions[t], 1) << name << " seed " << seed << ": task " << t;
  }
}

TEST(task_trace, the_chrome_trace_has_poll_slices_wake_instants_and_state_changes_properly_nested) {
  for (const auto& [name, seed] : cases) {
    const auto r = recorded_run(name, seed);
    const json doc = chrome_of(r);
    ASSERT_TRUE(doc.contains("traceEvents"));
    std::size_t poll_begins = 0;
    for (const auto& e : r.events) poll_begins += is(e, task_event::poll_begin) ? 1 : 0;

    std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;  // tid -> [ts, end)
    std::size_t poll_slices = 0, wake_instants = 0, completed_instants = 0;
    std::map<std::int64_t, int> flow_ends;  // id -> +1 per start, +2 per finish
    for (const auto& ev : doc["traceEvents"]) {
      const std::string ph = ev.at("ph");
      ASSERT_TRUE(ev.contains("pid"));
      if (ph == "M") continue;
      ASSERT_TRUE(ev.contains("ts")) << ev.dump();
      ASSERT_TRUE(ev.contains("tid")) << ev.dump();
      const std::string label = ev.value("name", "");
      if (ph == "X") {
        ASSERT_GE(ev.at("dur").get<std::int64_t>(), 1) << ev.dump();
        slices[ev["tid"].get<std::int64_t>()].emplace_back(ev["ts"].get<std::int64_t>(),
                                                           ev["ts"].get<std::int64_t>() + ev["dur"].get<std::int64_t>());
        if (label.rfind("poll task ", 0) == 0) {
          ++poll_slices;
          EXPECT_EQ(ev.value("cat", ""), "task");
          EXPECT_EQ(label, "poll task " + std::to_string(ev["args"]["task"].get<std::uint64_t>()));
          const std::string result = ev["args"]["result"];
          EXPECT_TRUE(result == "suspended" || result == "completed") << ev.dump();
        }
      } else if (ph == "i") {
        if (ev.value("cat", "") != "task") continue;
        ASSERT_TRUE(ev["args"].contains("task")) << ev.dump();
        ASSERT_TRUE(ev["args"].contains("state")) << ev.dump();
        if (label.rfind("wake task ", 0) == 0) ++wake_instants;
        if (ev["args"]["state"] == "completed") {
          ++completed_instants;
          EXPECT_TRUE(ev["args"].contains("outcome")) << ev.dump();
        }
      } else if (ph == "s" || ph == "f") {
        flow_ends[ev.at("id").get<std::int64_t>()] += ph == "s" ? 1 : 2;
        if (ph == "f") {
          EXPECT_EQ(ev.value("bp", ""), "e");
        }
      } else {
        ADD_FAILURE() << "unexpected phase " << ev.dump();
      }
    }
    EXPECT_EQ(poll_slices, poll_begins) << name;
    EXPECT_GT(poll_slices, 0u) << name;
    EXPECT_GT(wake_instants + completed_instants, 0u) << name;
    EXPECT_GT(completed_instants, 0u) << name;
    for (const auto& [id, ends] : flow_ends) EXPECT_EQ(ends, 3) << name << ": flow " << id << " lacks an end";

    // Per lane, complete slices nest: sorted by start (longer first on ties), each slice ends
    // before its enclosing one does, or starts after it ended (no partial overlap).
    for (auto& [tid, lane] : slices) {
      std::sort(lane.begin(), lane.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : a.second > b.second;
      });
      std::vector<std::pair<std::int64_t, std::int64_t>> stack;
      for (const auto& s : lane) {
        while (!stack.empty() && stack.back().second <= s.first) stack.pop_back();
        if (!stack.empty()) {
          EXPECT_LE(s.second, stack.back().second)
              << name << " seed " << seed << " lane " << tid << ": [" << s.first << "," << s.second
              << ") overlaps [" << stack.back().first << "," << stack.back().second << ")";
        }
        stack.push_back(s);
      }
    }
  }
}

TEST(task_trace, cross_worker_wakes_draw_flow_arrows_into_the_next_poll) {
  const auto r = recorded_run("cross_worker_ping_pong", 7);
  const json doc = chrome_of(r);
  std::size_t woken = 0;
  for (const auto& e : r.events) woken += is(e, task_event::woken) ? 1 : 0;
  std::size_t starts = 0, cross_lane = 0;
  std::map<std::int64_t, std::int64_t> start_tid;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "s") {
      ++starts;
      start_tid[ev["id"].get<std::int64_t>()] = ev["tid"].get<std::int64_t>();
    }
  }
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "f" && start_tid.at(ev["id"].get<std::int64_t>()) != ev["tid"].get<std::int64_t>()) ++cross_lane;
  }
  EXPECT_GT(woken, 0u);
  EXPECT_GT(starts, 0u);
  EXPECT_LE(starts, woken);    // one per wake that queued a poll which then ran
  EXPECT_GT(cross_lane, 0u);   // some wakes come from another worker's fiber
}

TEST(task_trace, the_same_seed_gives_the_same_task_events_and_hash) {
  for (const auto& [name, seed] : cases) {
    const auto a = recorded_run(name, seed);
    const auto b = recorded_run(name, seed);
    EXPECT_EQ(a.trace_hash, b.trace_hash) << name;
    std::ostringstream ja, jb;
    weft::sim::write_chrome(ja, a.events, a.fiber_names);
    weft::sim::write_chrome(jb, b.events, b.fiber_names);
    EXPECT_EQ(ja.str(), jb.str()) << name;
  }
}

TEST(task_trace, a_trace_point_is_not_a_scheduling_point) {
  // Every scheduling point records one `yield` line and advances the step; a task event shares
  // the step of whatever came before it. So the steps of a run equal its yields, task events or
  // not, and a task event never starts a step of its own.
  for (const auto& [name, seed] : cases) {
    const auto r = recorded_run(name, seed);
    std::uint64_t yields = 0, task_events = 0;
    std::uint64_t previous_step = 0;
    for (const auto& e : r.events) {
      if (e.kind == event_kind::yield) ++yields;
      if (e.kind == event_kind::task) {
        ++task_events;
        EXPECT_EQ(e.step, previous_step) << name << ": " << e.line;
      }
      previous_step = e.step;
    }
    EXPECT_GT(task_events, 0u) << name;
    EXPECT_EQ(yields, r.steps) << name;
  }
}

struct fake_cell {
  int* evaluated;
  std::uint64_t id() const {
    ++*evaluated;
    return 7;
  }
};

TEST(task_trace, outside_a_run_a_trace_point_does_nothing) {
  static_assert(weft::platform::task_trace_enabled);
  int evaluated = 0;
  fake_cell cell{&evaluated};
  const fake_cell* p = &cell;
  WEFT_TRACE_TASK(poll_begin, p);                  // no engine on this thread: ignored
  WEFT_TRACE_TASK_DETAIL(completed, p, "value");
  EXPECT_EQ(evaluated, 2);  // the sim flavor does evaluate its arguments
}

}  // namespace
