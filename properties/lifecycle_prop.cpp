// Lifecycle properties from the standards profile (shared/seeds/003): repeated stop requests are
// idempotent and give the same typed outcome; admission closes before cancellation; every
// spawned task's outcome is observed by its owner; blocking work respects its capacity. Each
// runs inside one simulator run with counts and a seed drawn by rapidcheck, and each has a
// known-bad wrapper that the property must catch with a small counterexample.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/sim/context.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

#include "runtime_sut.hpp"
#include "support/property_check.hpp"
#include "support/sim_case.hpp"

namespace weft::properties::lifecycle {
namespace {

using rtmodel::gate;
using rtmodel::gate_leaf;

// Sleeps the calling simulated thread on the virtual clock: on return, every other fiber ran
// out of work (the simulator advances time only when all are blocked).
void quiesce(std::int64_t ms = 1) {
  sync::mutex m;
  sync::condvar cv;
  sync::unique_lock<sync::mutex> hold(m);
  const instant until = platform::clock::now() + std::chrono::milliseconds(ms);
  while (platform::clock::now() < until) (void)cv.wait_until(hold, until);
}

std::int64_t draw(const char* name, std::int64_t lo, std::int64_t hi) {
  return *rc::gen::inRange<std::int64_t>(lo, hi + 1).as(name);
}

void finish_case(const sim::run_result& r, std::uint64_t seed, std::size_t size, const std::string& what) {
  if (!r.passed) note_failing_case_size(size);
  require_passed(r, {seed, sim::describe(sim::options{}), binary_replay(seed)}, what);
}

// A task parked on a gate nobody opens; its frame's destructor says it was cut short.
auto parked_task(gate* g, std::uint64_t* cancel_seq, std::uint64_t* clock) {
  return [g, cancel_seq, clock]() -> task<int> {
    struct guard_t {
      std::uint64_t* cancel_seq;
      std::uint64_t* clock;
      ~guard_t() {
        if (*cancel_seq == 0) *cancel_seq = ++*clock;
      }
    } guard{cancel_seq, clock};
    co_await gate_leaf(*g);
    co_return 0;
  };
}

// ---- 1. repeated stop requests are idempotent and give the same typed outcome ----------------

enum class stop_bug { none, second_request_force_aborts };

void repeated_stop_requests_are_idempotent(stop_bug bug) {
  const auto workers = static_cast<std::size_t>(draw("workers", 1, 3));
  const auto parked = static_cast<std::size_t>(draw("parked tasks", 0, 4));
  const auto requests = static_cast<std::size_t>(draw("stop requests", 1, 5));
  const auto from = *rc::gen::container<std::vector<int>>(requests, rc::gen::inRange(0, 3)).as(
      "who requests (0 driver, 1 other thread, 2 a task on a worker)");
  const std::uint64_t seed = effective_sim_seed(*rc::gen::arbitrary<std::uint64_t>().as("sim seed"));

  const auto r = run_in_sim(seed, {}, [&](sim::context& sim) {
    auto rt = runtime::builder().workers(workers).build();
    auto sched = rt.scheduler();
    std::vector<std::unique_ptr<gate>> gates;
    std::vector<join_handle<int>> handles;
    std::uint64_t clock = 0;
    std::vector<std::uint64_t> cancel_seq(parked, 0);
    for (std::size_t i = 0; i < parked; ++i) {
      gates.push_back(std::make_unique<gate>());
      handles.push_back(sched.spawn(parked_task(gates.back().get(), &cancel_seq[i], &clock)));
    }
    quiesce();
    std::size_t made = 0;
    auto request = [&](int who) {
      ++made;
      if (bug == stop_bug::second_request_force_aborts && made >= 2) {
        for (auto& h : handles) h.abort();  // BUG (test-only): a repeated request escalates to abort
      }
      switch (who) {
        case 0: rt.request_stop(); break;
        case 1: {
          auto ops = rt.operations();
          platform::thread t = sim.start_thread([ops] { ops.request_stop(); });
          t.join();
          break;
        }
        default: {
          // From a worker: a task asks through its builtins (admission may already be closed,
          // then the driver asks instead — the request is what counts).
          auto h = sched.spawn([]() -> task<int> {
            builtins::current().operations().request_stop();
            co_return 0;
          });
          if (h.is_finished()) {
            rt.request_stop();
          } else {
            (void)h.join();
          }
        }
      }
      if (!rt.stop_requested()) sim.fail("stop_requested() false after a request");
      auto late = sched.spawn([]() -> task<int> { co_return 1; }).join();
      if (late || !late.error().is_rejected()) {
        sim.fail("a spawn after a stop request was admitted");
      }
    };
    for (int who : from) request(who);
    quiesce();
    const stop_outcome out = std::move(rt).stop();
    // The same typed outcome however many requests came first: one request and a stop cancels
    // exactly the parked tasks, nothing else.
    const stop_outcome expected = stop_outcome::from_counts({parked, 0, 0});
    if (!(out == expected)) {
      sim.fail("stop() after " + std::to_string(requests) + " requests: kind " + std::to_string(out.get_kind()) +
               " tasks_cancelled " + std::to_string(out.counts().tasks_cancelled) + "; one request gives kind " +
               std::to_string(expected.get_kind()) + " tasks_cancelled " + std::to_string(parked));
    }
    for (auto& h : handles) {
      auto res = h.join();
      if (res || !res.error().is_cancelled()) sim.fail("a parked task did not end cancelled");
    }
  });
  finish_case(r, seed, parked + requests, "repeated stop requests");
}

TEST(lifecycle, repeated_stop_requests_are_idempotent_and_give_the_same_typed_outcome) {
  check_property(500, [] { repeated_stop_requests_are_idempotent(stop_bug::none); });
}
TEST(lifecycle_known_bad, a_repeated_request_that_force_aborts_is_caught) {
  const counterexample c = find_counterexample("lifecycle/known_bad/force_abort", 300, [] {
    repeated_stop_requests_are_idempotent(stop_bug::second_request_force_aborts);
  });
  ASSERT_TRUE(c.found);
  EXPECT_LE(c.size, 5u) << c.report;  // minimum: one parked task, two requests
  std::printf("force_abort: counterexample of size %zu\n", c.size);
}

// ---- 2. admission closes before cancellation ---------------------------------------------------

enum class admission_bug { none, cancels_before_closing };

// Whether a spawn lands after the first cancellation depends on the interleaving of the
// producers, the driver and the workers, so each case runs under several schedules
// (run_in_sim_schedules): a small case fails under one of them, and shrinking stays small.
constexpr std::size_t admission_schedules_per_case = 8;

void admission_closes_before_cancellation(admission_bug bug) {
  const auto workers = static_cast<std::size_t>(draw("workers", 1, 3));
  const auto parked = static_cast<std::size_t>(draw("parked tasks", 1, 4));
  const auto producers = static_cast<std::size_t>(draw("producers", 1, 3));
  const auto spawns = static_cast<std::size_t>(draw("spawns per producer", 1, 6));
  const std::uint64_t drawn = *rc::gen::arbitrary<std::uint64_t>().as("sim seed");

  const auto [r, seed] = run_in_sim_schedules(drawn, admission_schedules_per_case, {}, [&](sim::context& sim) {
    auto rt = runtime::builder().workers(workers).build();
    auto sched = rt.scheduler();
    std::uint64_t clock = 0;  // one linear order: every fiber runs on the simulator's one thread
    std::vector<std::unique_ptr<gate>> gates;
    std::vector<join_handle<int>> parked_handles;
    std::vector<std::uint64_t> cancel_seq(parked, 0);
    for (std::size_t i = 0; i < parked; ++i) {
      gates.push_back(std::make_unique<gate>());
      parked_handles.push_back(sched.spawn(parked_task(gates.back().get(), &cancel_seq[i], &clock)));
    }
    quiesce();
    struct attempt {
      std::uint64_t began = 0;
      bool admitted = false;
    };
    std::vector<std::vector<attempt>> attempts(producers);
    std::vector<std::vector<join_handle<int>>> handles(producers);
    std::vector<platform::thread> threads;
    for (std::size_t p = 0; p < producers; ++p) {
      threads.push_back(sim.start_thread([&, p] {
        for (std::size_t i = 0; i < spawns; ++i) {
          attempt a;
          a.began = ++clock;
          auto h = sched.spawn([]() -> task<int> { co_return 1; });
          if (h.is_finished()) {
            auto res = h.join();
            a.admitted = res || !res.error().is_rejected();
          } else {
            a.admitted = true;
          }
          attempts[p].push_back(a);
          handles[p].push_back(std::move(h));
          platform::yield_thread();
        }
      }));
    }
    platform::yield_thread();
    if (bug == admission_bug::cancels_before_closing) {
      for (auto& h : parked_handles) h.abort();  // BUG (test-only): cancel first, close admission later
      quiesce();                                   // ...and let the cancellations land meanwhile
    }
    rt.request_stop();
    for (auto& t : threads) t.join();
    (void)std::move(rt).stop();
    std::uint64_t first_cancel = 0;
    for (std::uint64_t c : cancel_seq) {
      if (c != 0 && (first_cancel == 0 || c < first_cancel)) first_cancel = c;
    }
    if (first_cancel == 0) sim.fail("no parked task was cancelled");
    for (const auto& list : attempts) {
      for (const attempt& a : list) {
        if (a.admitted && a.began > first_cancel) {
          sim.fail("a spawn begun after the first cancellation (order " + std::to_string(first_cancel) +
                   ") was admitted (order " + std::to_string(a.began) + ")");
        }
      }
    }
  });
  finish_case(r, seed, parked + producers * spawns, "admission before cancellation");
}

TEST(lifecycle, admission_closes_before_cancellation) {
  check_property(500, [] { admission_closes_before_cancellation(admission_bug::none); });
}
TEST(lifecycle_known_bad, cancelling_before_closing_admission_is_caught) {
  const counterexample c = find_counterexample("lifecycle/known_bad/cancel_first", 500, [] {
    admission_closes_before_cancellation(admission_bug::cancels_before_closing);
  });
  ASSERT_TRUE(c.found);
  // Minimum 2 (one parked task, one late spawn); with 8 schedules per case the shrink ends at 3
  // or 4 (3 for 32 of 37 rapidcheck seeds tried; a single schedule per case left it at 5-8).
  EXPECT_LE(c.size, 4u) << c.report;
  std::printf("cancel_first: counterexample of size %zu\n", c.size);
}

// ---- 3. every spawned task's outcome is observed by its owner ----------------------------------

enum class owner_bug { none, swallows_panics };

void every_outcome_is_observed_by_its_owner(owner_bug bug) {
  const auto workers = static_cast<std::size_t>(draw("workers", 1, 3));
  const auto kinds = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 4)).as(
      "tasks (0 value, 1 panicker, 2 parked, 3 aborted parked)");
  const std::uint64_t seed = effective_sim_seed(*rc::gen::arbitrary<std::uint64_t>().as("sim seed"));

  const auto r = run_in_sim(seed, {}, [&](sim::context& sim) {
    auto rt = runtime::builder().workers(workers).build();
    auto sched = rt.scheduler();
    struct evidence {
      bool threw = false;
      bool finished = false;
    };
    std::vector<evidence> ev(kinds.size());
    std::vector<std::unique_ptr<gate>> gates;
    std::vector<join_handle<int>> owned;  // the owner: it keeps every handle until the outcome
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      gates.push_back(std::make_unique<gate>());
      evidence* e = &ev[i];
      gate* g = gates.back().get();
      const int k = kinds[i];
      owned.push_back(sched.spawn([e, g, k, i]() -> task<int> {
        if (k == 1) {
          e->threw = true;
          throw std::runtime_error("task " + std::to_string(i));
        }
        if (k >= 2) co_await gate_leaf(*g);
        e->finished = true;
        co_return static_cast<int>(i);
      }));
      if (k == 3) owned.back().abort();
    }
    quiesce();
    (void)std::move(rt).stop();
    for (std::size_t i = 0; i < owned.size(); ++i) {
      if (!owned[i].is_finished()) {
        sim.fail("task " + std::to_string(i) + " unobserved: its handle never finished");
        continue;
      }
      auto res = owned[i].join();
      if (bug == owner_bug::swallows_panics && !res && res.error().is_panicked()) res = 0;  // BUG (test-only)
      if (owned[i].valid()) sim.fail("task " + std::to_string(i) + ": a second outcome is deliverable");
      std::string seen = res ? "ok" : to_string(res.error().get_kind());
      std::string truth = ev[i].threw ? "panicked" : ev[i].finished ? "ok" : "cancelled";
      if (seen != truth) sim.fail("task " + std::to_string(i) + ": owner observed " + seen + ", the task " + truth);
      if (res && *res != static_cast<int>(i)) sim.fail("task " + std::to_string(i) + ": wrong value");
      if (!res && res.error().is_panicked()) {
        try {
          std::rethrow_exception(res.error().exception());
        } catch (const std::runtime_error& x) {
          if (std::string(x.what()) != "task " + std::to_string(i)) sim.fail("panic payload lost");
        }
      }
    }
  });
  finish_case(r, seed, kinds.size(), "outcomes observed by the owner");
}

TEST(lifecycle, every_spawned_tasks_outcome_is_observed_by_its_owner) {
  check_property(500, [] { every_outcome_is_observed_by_its_owner(owner_bug::none); });
}
TEST(lifecycle_known_bad, an_owner_that_swallows_panics_is_caught) {
  const counterexample c = find_counterexample("lifecycle/known_bad/swallow_panics", 300, [] {
    every_outcome_is_observed_by_its_owner(owner_bug::swallows_panics);
  });
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.size, 1u) << c.report;  // one panicking task
  std::printf("swallow_panics: counterexample of size %zu\n", c.size);
}

// ---- 4. blocking work respects its capacity ----------------------------------------------------

enum class blocking_bug { none, unbounded_fallback };

void blocking_work_respects_its_capacity(blocking_bug bug) {
  const auto threads_max = static_cast<std::size_t>(draw("max threads", 1, 3));
  const auto queued_max = static_cast<std::size_t>(draw("max queued", 1, 3));
  const auto submitters = static_cast<std::size_t>(draw("submitting threads", 1, 3));
  const auto per = static_cast<std::size_t>(draw("submissions per thread", 1, 4));
  const std::uint64_t seed = effective_sim_seed(*rc::gen::arbitrary<std::uint64_t>().as("sim seed"));

  const auto r = run_in_sim(seed, {}, [&](sim::context& sim) {
    auto rt = runtime::builder().workers(1).blocking_capacity(threads_max, queued_max).build();
    auto sched = rt.scheduler();
    sync::mutex lock;
    sync::condvar cv;
    bool open = false;
    std::size_t running = 0;
    std::size_t peak = 0;
    std::size_t ran = 0;
    std::size_t accepted = 0;
    std::vector<join_handle<int>> handles;
    std::vector<platform::thread> extra;
    auto job = [&]() -> int {
      ++running;
      peak = std::max(peak, running);
      {
        sync::unique_lock<sync::mutex> hold(lock);
        while (!open) cv.wait(hold);
      }
      --running;
      ++ran;
      return 7;
    };
    std::vector<platform::thread> subs;
    for (std::size_t s = 0; s < submitters; ++s) {
      subs.push_back(sim.start_thread([&] {
        for (std::size_t i = 0; i < per; ++i) {
          auto h = sched.spawn_blocking(job);
          if (!h.is_finished()) {
            ++accepted;
          } else if (bug == blocking_bug::unbounded_fallback) {
            extra.push_back(sim.start_thread(job));  // BUG (test-only): isolation without a bound
          }
          handles.push_back(std::move(h));
        }
      }));
    }
    for (auto& t : subs) t.join();
    quiesce();
    // Safety: never more than the capacity in flight, never more running than threads. (Not
    // exactly the capacity under concurrent submitters: a job handed to a thread that has not
    // picked it up yet counts as waiting, so a racing submission may be refused early.)
    const std::size_t total = submitters * per;
    const std::size_t capacity = threads_max + queued_max;
    if (accepted > capacity || accepted < std::min(total, threads_max)) {
      sim.fail("blocking pool accepted " + std::to_string(accepted) + " of " + std::to_string(total) +
               " gated callbacks; capacity " + std::to_string(threads_max) + "+" + std::to_string(queued_max));
    }
    if (peak > threads_max) {
      sim.fail(std::to_string(peak) + " blocking callbacks ran at once; at most " + std::to_string(threads_max) +
               " threads");
    }
    if (peak != std::min(accepted, threads_max)) {
      sim.fail(std::to_string(peak) + " blocking callbacks running at quiescence; expected " +
               std::to_string(std::min(accepted, threads_max)));
    }
    // Once settled, the bound is exact: one more submission is admitted iff there is room.
    {
      const std::size_t before = accepted;
      auto h = sched.spawn_blocking(job);
      const bool admitted = !h.is_finished();
      if (admitted) ++accepted;
      if (admitted != (before < capacity)) {
        sim.fail(std::string("a settled pool ") + (admitted ? "admitted" : "refused") + " a submission with " +
                 std::to_string(before) + " of " + std::to_string(capacity) + " in flight");
      }
      handles.push_back(std::move(h));
    }
    {
      sync::lock_guard<sync::mutex> hold(lock);
      open = true;
    }
    cv.notify_all();
    for (auto& t : extra) t.join();
    quiesce();
    if (ran != accepted + extra.size()) sim.fail("an accepted blocking callback did not run exactly once");
    for (auto& h : handles) {
      auto res = h.join();
      if (res && *res != 7) sim.fail("wrong blocking result");
    }
    (void)std::move(rt).stop();
  });
  finish_case(r, seed, submitters * per, "blocking capacity");
}

TEST(lifecycle, blocking_work_respects_its_capacity) {
  check_property(500, [] { blocking_work_respects_its_capacity(blocking_bug::none); });
}
TEST(lifecycle_known_bad, unbounded_blocking_isolation_is_caught) {
  const counterexample c = find_counterexample("lifecycle/known_bad/unbounded_blocking", 300, [] {
    blocking_work_respects_its_capacity(blocking_bug::unbounded_fallback);
  });
  ASSERT_TRUE(c.found);
  // Capacity 1+1 and three submissions is the minimum; concurrent submitters may keep one more.
  EXPECT_LE(c.size, 4u) << c.report;
  std::printf("unbounded_blocking: counterexample of size %zu\n", c.size);
}

}  // namespace
}  // namespace weft::properties::lifecycle
