// Stateful model-based property: any sequence of runtime commands, applied by one driver thread
// to a simulated runtime and to the reference model (runtime_model.hpp), agrees with the model
// after every command and at the end — every task's outcome, admission, placement, the local
// domain's answers and counts, the blocking pool's occupancy and the stop outcome.
//
// Each case draws a configuration (workers, blocking capacity, domain inbox capacity), a
// simulator seed and a command sequence; the sequence runs from the simulator's driver fiber.
// The known_bad tests run the same property against wrappers with a planted bug and require a
// counterexample of a few commands.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include "runtime_model.hpp"
#include "runtime_sut.hpp"
#include "support/property_check.hpp"
#include "support/sim_case.hpp"

namespace weft::properties::rtmodel {
namespace {

using command = rc::state::Command<model, sut>;

std::string show(const command& c) {
  std::ostringstream os;
  c.show(os);
  return os.str();
}

std::int64_t draw_sleep_ms() { return *rc::gen::element<std::int64_t>(1, 2, 5); }

struct submit_cmd final : command {
  task_kind kind = *rc::gen::element(task_kind::value, task_kind::parked, task_kind::sleeper, task_kind::panicker);
  via how = *rc::gen::element(via::spawn, via::spawn_anywhere, via::cross_thread);
  std::int64_t sleep_ms = draw_sleep_ms();
  void apply(model& m) const override { m.submit(kind, how, sleep_ms); }
  void run(const model&, sut& s) const override { s.submit(kind, how, sleep_ms); }
  void show(std::ostream& os) const override {
    os << to_string(how) << "(" << to_string(kind);
    if (kind == task_kind::sleeper) os << " " << sleep_ms << "ms";
    os << ")";
  }
};

// Submitted after 1 ms of quiescence: the pool counts a job handed to a just-started thread that
// has not picked it up yet as *waiting*, so back-to-back submissions may be refused before the
// capacity is reached (allowed by the pool's contract, not predictable by the model). Settled,
// the bound is exact: admitted iff fewer than threads + queued are in flight.
struct spawn_blocking_cmd final : command {
  void apply(model& m) const override {
    m.sleep(1);
    m.submit(task_kind::blocking, via::spawn_blocking, 0);
  }
  void run(const model&, sut& s) const override {
    s.sleep(1);
    s.submit(task_kind::blocking, via::spawn_blocking, 0);
  }
  void show(std::ostream& os) const override { os << "sleep(1ms) + spawn_blocking(gated)"; }
};

struct abort_cmd final : command {
  std::size_t index = 0;
  explicit abort_cmd(const model& m) {
    RC_PRE(!m.tasks.empty());
    index = *rc::gen::inRange<std::size_t>(0, m.tasks.size());
  }
  void checkPreconditions(const model& m) const override {
    RC_PRE(index < m.tasks.size());
    RC_PRE(m.tasks[index].kind != task_kind::blocking);
  }
  void apply(model& m) const override { m.abort(index); }
  void run(const model&, sut& s) const override { s.abort(index); }
  void show(std::ostream& os) const override { os << "abort(task " << index + 1 << ")"; }
};

struct wake_cmd final : command {
  std::size_t index = 0;
  explicit wake_cmd(const model& m) {
    RC_PRE(!m.tasks.empty());
    index = *rc::gen::inRange<std::size_t>(0, m.tasks.size());
  }
  void checkPreconditions(const model& m) const override {
    RC_PRE(index < m.tasks.size());
    RC_PRE(m.tasks[index].kind == task_kind::parked);
  }
  void apply(model& m) const override { m.wake(index); }
  void run(const model&, sut& s) const override { s.wake(index); }
  void show(std::ostream& os) const override { os << "wake(task " << index + 1 << ")"; }
};

struct sleep_cmd final : command {
  std::int64_t ms = draw_sleep_ms();
  void apply(model& m) const override { m.sleep(ms); }
  void run(const model&, sut& s) const override {
    s.sleep(ms);
    s.mark_quiescent();
  }
  void show(std::ostream& os) const override { os << "sleep(" << ms << "ms)"; }
};

struct release_cmd final : command {
  void apply(model& m) const override { m.release_blocking(); }
  void run(const model&, sut& s) const override { s.release_blocking(); }
  void show(std::ostream& os) const override { os << "release_blocking"; }
};

struct dispatch_cmd final : command {
  void apply(model& m) const override { m.dispatch(); }
  void run(const model&, sut& s) const override { s.dispatch(); }
  void show(std::ostream& os) const override { os << "dispatch(local_domain, from another thread)"; }
};

struct drive_cmd final : command {
  void apply(model& m) const override { m.drive_domain(); }
  void run(const model&, sut& s) const override { s.drive_domain(); }
  void show(std::ostream& os) const override { os << "drive(local_domain)"; }
};

struct request_stop_cmd final : command {
  void apply(model& m) const override { m.request_stop(); }
  void run(const model&, sut& s) const override { s.request_stop(); }
  void show(std::ostream& os) const override { os << "request_stop"; }
};

struct stop_cmd final : command {
  void checkPreconditions(const model& m) const override { RC_PRE(!m.stopped); }
  void apply(model& m) const override { m.stop(); }
  void run(const model&, sut& s) const override { s.stop(); }
  void show(std::ostream& os) const override { os << "stop"; }
};

rc::Gen<config> gen_config() {
  return rc::gen::build<config>(rc::gen::set(&config::workers, rc::gen::inRange<std::size_t>(1, 4)),
                                rc::gen::set(&config::blocking_threads, rc::gen::inRange<std::size_t>(1, 3)),
                                rc::gen::set(&config::blocking_queued, rc::gen::inRange<std::size_t>(1, 3)),
                                rc::gen::set(&config::domain_capacity, rc::gen::inRange<std::size_t>(1, 4)),
                                rc::gen::set(&config::sim_seed, rc::gen::arbitrary<std::uint64_t>()));
}

// The property, against the runtime wrapped with `bug`.
void runtime_agrees_with_model(sut_bug bug) {
  const config cfg = *gen_config();
  const model initial(cfg);
  const auto commands = *rc::gen::scale(
      0.5, rc::state::gen::commands(initial, [](const model& m) {
        return rc::gen::weightedOneOf<std::shared_ptr<const command>>({
            {6, rc::state::gen::execOneOfWithArgs<submit_cmd>()(m)},
            {2, rc::state::gen::execOneOfWithArgs<spawn_blocking_cmd>()(m)},
            {2, rc::state::gen::execOneOfWithArgs<abort_cmd>()(m)},
            {2, rc::state::gen::execOneOfWithArgs<wake_cmd>()(m)},
            {3, rc::state::gen::execOneOfWithArgs<sleep_cmd>()(m)},
            {1, rc::state::gen::execOneOfWithArgs<release_cmd>()(m)},
            {2, rc::state::gen::execOneOfWithArgs<dispatch_cmd>()(m)},
            {1, rc::state::gen::execOneOfWithArgs<drive_cmd>()(m)},
            {1, rc::state::gen::execOneOfWithArgs<request_stop_cmd>()(m)},
            {1, rc::state::gen::execOneOfWithArgs<stop_cmd>()(m)},
        });
      }));

  const std::uint64_t sim_seed = effective_sim_seed(cfg.sim_seed);
  sim::options opts;
  const auto result = run_in_sim(sim_seed, opts, [&](sim::context& sim) {
    sut s(sim, cfg, bug);
    model m(cfg);
    std::size_t step = 0;
    for (const auto& c : commands) {
      c->apply(m);
      c->run(m, s);
      s.compare(m, step, show(*c));
      ++step;
      if (sim.failed()) return;
    }
    if (!m.stopped) {
      m.stop();
      s.stop();
    }
    s.finish(m, step);
  });
  RC_TAG(commands.size() < 5 ? "commands 0-4" : commands.size() < 15 ? "commands 5-14" : "commands 15+",
         result.steps < 1'000 ? "steps <1k" : result.steps < 10'000 ? "steps <10k" : "steps 10k+");
  if (!result.passed) {
    note_failing_case_size(commands.size());
    RC_LOG() << "configuration: " << cfg << "\n";
  }
  require_passed(result, {sim_seed, sim::describe(opts), binary_replay(sim_seed)},
                 "runtime vs model (" + std::to_string(commands.size()) + " commands)");
}

TEST(runtime_model, every_command_sequence_agrees_with_the_reference_model) {
  check_property(2000, [] { runtime_agrees_with_model(sut_bug::none); });
}

// ---- known-bad variants: the property must fail, and shrink to a few commands ----------------

void expect_caught(sut_bug bug, std::size_t max_commands) {
  const counterexample c = find_counterexample(std::string("runtime_model/known_bad/") + to_string(bug), 300,
                                               [bug] { runtime_agrees_with_model(bug); });
  ASSERT_TRUE(c.found) << "the property did not catch " << to_string(bug);
  EXPECT_GT(c.size, 0u);
  EXPECT_LE(c.size, max_commands) << "counterexample not shrunk:\n" << c.report;
  std::printf("known bad %s: counterexample of %zu commands\n", to_string(bug), c.size);
}

TEST(runtime_model_known_bad, a_wrapper_that_runs_a_rejected_factory_is_caught) {
  expect_caught(sut_bug::runs_rejected_factory, 2);
}
TEST(runtime_model_known_bad, a_swallowed_abort_is_caught) { expect_caught(sut_bug::drops_abort, 3); }
// The wake is lost only if the task already published its waker: the minimal case may need one
// more command to let the worker poll first.
TEST(runtime_model_known_bad, a_lost_wake_is_caught) { expect_caught(sut_bug::lost_wake, 4); }
TEST(runtime_model_known_bad, a_request_stop_that_leaves_admission_open_is_caught) {
  expect_caught(sut_bug::request_stop_keeps_admission, 2);
}
TEST(runtime_model_known_bad, a_dispatch_that_drops_a_full_rejection_is_caught) {
  expect_caught(sut_bug::domain_drops_full, 2);
}
TEST(runtime_model_known_bad, unbounded_blocking_isolation_is_caught) {
  expect_caught(sut_bug::blocking_unbounded, 3);
}

}  // namespace
}  // namespace weft::properties::rtmodel
