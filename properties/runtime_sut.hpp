// properties/runtime_sut.hpp — the system under test of the stateful runtime property: a real
// weft::runtime (sim flavor) and a local_domain, driven from the simulator's driver fiber, with
// what every task did recorded beside it.
//
// Everything here lives inside one simulator run: construct it in the run's body, destroy it
// there. The checks against the model (compare()) report through sim.fail(); nothing throws.
//
// `bug` plants a known-bad behaviour in the *wrapper* (never in weft): the properties must catch
// each one (runtime_model_prop.cpp, known_bad tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/builtins.hpp>
#include <weft/join_handle.hpp>
#include <weft/local_domain.hpp>
#include <weft/platform/clock.hpp>
#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/runtime.hpp>
#include <weft/scheduler.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/oracles/timers.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>

#include "runtime_model.hpp"

namespace weft::properties::rtmodel {

enum class sut_bug : std::uint8_t {
  none,
  runs_rejected_factory,        // a refused spawn falls back to running the factory elsewhere
  drops_abort,                  // abort() is swallowed
  lost_wake,                    // wake sets the flag but never calls the stored waker
  request_stop_keeps_admission, // request_stop() is deferred to stop(): admission stays open
  domain_drops_full,            // dispatch reports `full` as accepted (the callback is lost)
  blocking_unbounded,           // a refused blocking callback runs on an extra thread instead
};

inline const char* to_string(sut_bug b) {
  switch (b) {
    case sut_bug::none: return "none";
    case sut_bug::runs_rejected_factory: return "runs_rejected_factory";
    case sut_bug::drops_abort: return "drops_abort";
    case sut_bug::lost_wake: return "lost_wake";
    case sut_bug::request_stop_keeps_admission: return "request_stop_keeps_admission";
    case sut_bug::domain_drops_full: return "domain_drops_full";
    case sut_bug::blocking_unbounded: return "blocking_unbounded";
  }
  return "?";
}

// A one-shot gate a parked task awaits: set-and-wake under the lock, check-and-publish under
// the lock (no lost wake).
struct gate {
  struct guarded {
    bool open = false;
    waker stored;
  };
  sync::mutex lock;
  sync::cell<guarded> state;
};

class gate_leaf {
 public:
  explicit gate_leaf(gate& g) noexcept : gate_(g) {}
  bool poll_ready(const waker& w) {
    sync::lock_guard<sync::mutex> hold(gate_.lock);
    return gate_.state.with_mut([&](gate::guarded& s) {
      if (s.open) return true;
      if (!s.stored.will_wake(w)) s.stored = w;
      return false;
    });
  }
  void await_resume() const noexcept {}

 private:
  gate& gate_;
};

// What a task's own code observed (written on its worker; read by the driver only after the
// handle finished, or at the end).
struct task_record {
  std::uint64_t id = 0;
  bool factory_ran = false;
  bool body_finished = false;
  bool frame_destroyed = false;
  std::optional<std::size_t> first_worker;
  bool migrated = false;
  // filled by the driver
  bool harvested = false;
  std::uint8_t actual = 0;
  std::string actual_detail;
};

// Where the calling code runs: the worker index, or nullopt off the runtime's workers.
inline std::optional<std::size_t> current_worker_index() {
  const builtins* b = builtins::try_current();
  if (b == nullptr) return std::nullopt;
  return b->worker().index;
}

inline void note_worker(task_record& r) {
  const auto here = current_worker_index();
  if (!r.first_worker) {
    r.first_worker = here;
  } else if (r.first_worker != here) {
    r.migrated = true;
  }
}

class sut {
  // Factories first: their deduced return types are used below.
  template <class Self>
  static auto make_factory_impl(Self* self, task_record* r, task_kind kind, gate* g, std::int64_t sleep_ms) {
    return [self, r, kind, g, sleep_ms]() -> task<std::uint64_t> {
      r->factory_ran = true;
      note_worker(*r);
      struct frame_guard {
        Self* self;
        task_record* r;
        bool armed = false;
        bool fired = false;
        ~frame_guard() {
          r->frame_destroyed = true;
          if (armed && !fired) self->timers().cancelled(r->id);
        }
      } guard{self, r};
      switch (kind) {
        case task_kind::value: break;
        case task_kind::parked:
          co_await gate_leaf(*g);
          note_worker(*r);
          break;
        case task_kind::sleeper: {
          const instant deadline = platform::clock::now() + std::chrono::milliseconds(sleep_ms);
          self->timers().armed(r->id, deadline);
          guard.armed = true;
          co_await weft::sleep_until(deadline);
          guard.fired = true;
          self->timers().fired(r->id, platform::clock::now());
          note_worker(*r);
          break;
        }
        case task_kind::panicker: throw std::runtime_error("planted panic");
        case task_kind::blocking: break;
      }
      r->body_finished = true;
      co_return r->id;
    };
  }
  auto make_factory(task_record* r, task_kind kind, gate* g, std::int64_t sleep_ms) {
    return make_factory_impl(this, r, kind, g, sleep_ms);
  }

 public:
  sut(sim::context& sim, const config& cfg, sut_bug bug)
      : sim_(sim),
        cfg_(cfg),
        bug_(bug),
        timers_(sim),
        domain_(event_loop::options{cfg.domain_capacity, nullptr}) {
    rt_.emplace(runtime::builder()
                    .workers(cfg.workers)
                    .blocking(blocking_policy::shared)
                    .blocking_capacity(cfg.blocking_threads, cfg.blocking_queued)
                    .build());
    sched_ = rt_->scheduler();
    spawner_ = domain_.spawner();
  }
  sut(const sut&) = delete;
  sut& operator=(const sut&) = delete;
  ~sut() { release_all_gates(); }

  // ---- commands ------------------------------------------------------------------------------
  void submit(task_kind kind, via how, std::int64_t sleep_ms) {
    auto rec = std::make_unique<task_record>();
    rec->id = records_.size() + 1;
    task_record* r = rec.get();
    records_.push_back(std::move(rec));
    aborted_.push_back(false);
    gates_.push_back(std::make_unique<gate>());
    gate* g = gates_.back().get();
    join_handle<std::uint64_t> h;
    if (kind == task_kind::blocking) {
      h = submit_blocking(r);
    } else {
      auto factory = make_factory(r, kind, g, sleep_ms);
      switch (how) {
        case via::spawn: h = sched_.spawn(factory); break;
        case via::spawn_anywhere: h = sched_.spawn_anywhere(factory); break;
        case via::cross_thread: {
          platform::thread producer = sim_.start_thread([&] {
            sim_.name_thread("producer");
            h = sched_.spawn(factory);
          });
          producer.join();
          break;
        }
        case via::spawn_blocking: break;
      }
      if (bug_ == sut_bug::runs_rejected_factory && h.is_finished() && !r->factory_ran) {
        // BUG (test-only): the refused factory is run anyway, on the local domain.
        h.detach();
        h = domain_.spawn(make_factory(r, kind, g, sleep_ms));
      }
    }
    handles_.push_back(std::move(h));
  }

  void abort(std::size_t i) {
    aborted_[i] = true;
    if (bug_ == sut_bug::drops_abort) return;  // BUG (test-only)
    handles_[i].abort();
  }

  void wake(std::size_t i) {
    gate& g = *gates_[i];
    waker w;
    {
      sync::lock_guard<sync::mutex> hold(g.lock);
      g.state.with_mut([&](gate::guarded& s) {
        s.open = true;
        w = s.stored;
      });
    }
    if (bug_ == sut_bug::lost_wake) return;  // BUG (test-only): the waker is never called
    std::move(w).wake();
  }

  void sleep(std::int64_t ms) {
    sync::mutex m;
    sync::condvar cv;
    sync::unique_lock<sync::mutex> hold(m);
    const instant until = platform::clock::now() + std::chrono::milliseconds(ms);
    while (platform::clock::now() < until) (void)cv.wait_until(hold, until);
  }

  void request_stop() {
    if (bug_ == sut_bug::request_stop_keeps_admission) return;  // BUG (test-only)
    if (rt_) rt_->request_stop();
  }

  void stop() {
    release_all_gates();
    if (!rt_) return;
    stop_outcome out = std::move(*rt_).stop();
    stop_ = out;
    rt_.reset();
  }

  void release_blocking() { release_all_gates(); }

  void dispatch() {
    submit_result answer;
    platform::thread producer = sim_.start_thread([&] {
      sim_.name_thread("dispatcher");
      answer = spawner_.dispatch([this] { ++domain_ran_; });
    });
    producer.join();
    if (!answer && bug_ == sut_bug::domain_drops_full) answer = {};  // BUG (test-only)
    dispatch_answers_.push_back(answer.has_value());
  }

  void drive_domain() { (void)domain_.run_n(1'000); }

  // ---- observation and comparison --------------------------------------------------------------
  // Joins every handle that finished (without blocking) and records its outcome.
  void harvest() {
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      task_record& r = *records_[i];
      if (r.harvested || !handles_[i].valid() || !handles_[i].is_finished()) continue;
      auto result = handles_[i].join();
      r.harvested = true;
      if (result) {
        r.actual = ok;
        if (*result != r.id) r.actual_detail = "wrong value " + std::to_string(*result);
      } else if (result.error().is_rejected()) {
        r.actual = result.error().rejection_reason() == queue_error::full ? rejected_full : rejected_closed;
      } else if (result.error().is_cancelled()) {
        r.actual = cancelled;
      } else {
        r.actual = panicked;
      }
    }
  }

  // After command `step` (shown as `what`): does what happened agree with `m`?
  void compare(const model& m, std::size_t step, const std::string& what) {
    harvest();
    const std::string at = "after command " + std::to_string(step + 1) + " (" + what + "): ";
    for (std::size_t i = 0; i < m.tasks.size(); ++i) {
      const task_entry& e = m.tasks[i];
      const task_record& r = *records_[i];
      const std::string name = "task " + std::to_string(i + 1) + " (" + to_string(e.kind) + ")";
      if (r.harvested) {
        if ((r.actual & e.allowed) == 0) {
          fail(at + name + " ended " + describe(r.actual) + ", model allows " + describe(e.allowed));
        }
        if (!r.actual_detail.empty()) fail(at + name + ": " + r.actual_detail);
        if ((r.actual & (rejected_closed | rejected_full)) != 0 && r.factory_ran) {
          fail(at + name + " was rejected but its factory ran");
        }
        if (r.actual == ok && e.kind != task_kind::blocking && !r.body_finished) {
          fail(at + name + " ended ok but its body did not finish");
        }
        if (r.actual == cancelled && e.kind != task_kind::blocking && r.body_finished) fail(at + name + " ended cancelled after its body finished");
      } else if (e.settled) {
        fail(at + name + " should have finished by now with " + describe(e.allowed) + " but has not");
      }
      if (r.factory_ran && e.kind != task_kind::blocking) {
        if (r.first_worker != std::optional<std::size_t>(e.worker)) {
          fail(at + name + " ran on worker " + (r.first_worker ? std::to_string(*r.first_worker) : "none") +
               ", round-robin placement says " + std::to_string(e.worker));
        }
        if (r.migrated) fail(at + name + " migrated between workers");
      }
    }
    if (m.domain_ran != domain_ran_) {
      fail(at + "local domain ran " + std::to_string(domain_ran_) + " callbacks, model says " +
           std::to_string(m.domain_ran));
    }
    if (m.dispatch_answers != dispatch_answers_) {
      fail(at + "dispatch answers differ: " + answers(dispatch_answers_) + " vs model " + answers(m.dispatch_answers));
    }
    if (blocking_peak_ > cfg_.blocking_threads) {
      fail(at + std::to_string(blocking_peak_) + " blocking callbacks ran at once; capacity is " +
           std::to_string(cfg_.blocking_threads) + " threads");
    }
    if (!m.stopped && !m.pool_settling && quiescent_ && blocking_running_ != m.blocking_running_at_quiescence()) {
      fail(at + std::to_string(blocking_running_) + " blocking callbacks running at quiescence, model says " +
           std::to_string(m.blocking_running_at_quiescence()));
    }
    if (rt_ && rt_->stop_requested() != m.stop_requested) {
      fail(at + "stop_requested() is " + (m.stop_requested ? "false" : "true") + ", model says the opposite");
    }
    if (m.stopped && stop_) check_stop_outcome(at);
    quiescent_ = false;
  }
  void mark_quiescent() { quiescent_ = true; }

  // At the end of the case (the runtime stopped): destroys the domain, checks what is left.
  void finish(const model& m, std::size_t steps) {
    compare(m, steps, "end: stop");
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      if (!records_[i]->harvested) fail("end: task " + std::to_string(i + 1) + " never reached an outcome");
      if (records_[i]->factory_ran && !records_[i]->frame_destroyed) {
        fail("end: task " + std::to_string(i + 1) + "'s frame was never destroyed");
      }
    }
    const std::size_t ran_before = domain_ran_;
    domain_.loop().shutdown();
    if (domain_ran_ != ran_before) fail("end: the local domain ran callbacks while shutting down");
    const submit_result late = spawner_.dispatch([this] { ++domain_ran_; });
    if (late || late.error() != queue_error::closed) fail("end: dispatch into a shut-down domain was not refused as closed");
    timers_.check();
  }

  sim::oracles::timer_ledger& timers() { return timers_; }

 private:
  static std::string answers(const std::vector<bool>& v) {
    std::string s;
    for (bool b : v) s += b ? 'A' : 'F';
    return s;
  }
  void fail(const std::string& why) {
    if (++failures_ <= 8) sim_.fail(why);
  }

  void check_stop_outcome(const std::string& at) {
    if (stop_checked_) return;
    stop_checked_ = true;
    const stop_outcome& out = *stop_;
    if (out.is_error()) {
      fail(at + "stop() from the driver answered error");
      return;
    }
    std::uint64_t cancelled_total = 0;
    std::uint64_t cancelled_unaborted = 0;
    for (std::size_t i = 0; i < records_.size(); ++i) {
      if (records_[i]->actual != cancelled) continue;
      ++cancelled_total;
      if (!aborted_[i]) ++cancelled_unaborted;
    }
    if (out.counts().tasks_cancelled > cancelled_total) {
      fail(at + "stop_outcome says " + std::to_string(out.counts().tasks_cancelled) + " tasks were cancelled, " +
           "only " + std::to_string(cancelled_total) + " handles saw `cancelled`");
    }
    if (cancelled_unaborted > 0 && out.is_complete()) {
      fail(at + "stop_outcome is complete but " + std::to_string(cancelled_unaborted) +
           " tasks nobody aborted were cancelled by the stop");
    }
    if (out.is_complete() != (out.counts().total() == 0)) fail(at + "stop_outcome's kind disagrees with its counts");
  }

  join_handle<std::uint64_t> submit_blocking(task_record* r) {
    const std::uint64_t epoch = gate_epoch_;
    auto job = [this, r, epoch]() -> std::uint64_t {
      r->factory_ran = true;
      ++blocking_running_;
      if (blocking_running_ > blocking_peak_) blocking_peak_ = blocking_running_;
      {
        sync::unique_lock<sync::mutex> hold(pool_gate_lock_);
        while (released_epoch_ <= epoch) pool_gate_cv_.wait(hold);
      }
      --blocking_running_;
      r->body_finished = true;
      r->frame_destroyed = true;
      return r->id;
    };
    join_handle<std::uint64_t> h = sched_.spawn_blocking(job);
    if (bug_ == sut_bug::blocking_unbounded && h.is_finished() && !r->factory_ran) {
      // BUG (test-only): "isolation" without a bound: a refused callback gets a thread of its own.
      // The handle stays the refused one; the extra thread is joined at the end.
      extra_threads_.push_back(sim_.start_thread(job));
    }
    if (h.is_finished() && !r->factory_ran) r->frame_destroyed = true;  // refused: nothing to destroy
    return h;
  }

  void release_all_gates() {
    {
      sync::lock_guard<sync::mutex> hold(pool_gate_lock_);
      released_epoch_ = ++gate_epoch_;
    }
    pool_gate_cv_.notify_all();
    for (auto& t : extra_threads_) {
      if (t.joinable()) t.join();
    }
    extra_threads_.clear();
  }

  sim::context& sim_;
  config cfg_;
  sut_bug bug_;
  sim::oracles::timer_ledger timers_;
  // Before the domain and the runtime, so they outlive both: a run that ends early destroys the
  // runtime with tasks unfinished, and destroying their frames touches their records and gates.
  std::vector<std::unique_ptr<task_record>> records_;
  std::vector<std::unique_ptr<gate>> gates_;
  local_domain domain_;
  local_spawner spawner_;
  std::optional<runtime> rt_;
  scheduler sched_;
  std::optional<stop_outcome> stop_;
  bool stop_checked_ = false;
  std::vector<join_handle<std::uint64_t>> handles_;
  std::vector<bool> aborted_;  // per task: the driver called abort() on it
  std::vector<bool> dispatch_answers_;
  std::size_t domain_ran_ = 0;
  // blocking pool gate: jobs submitted in epoch e wait until released_epoch_ > e
  sync::mutex pool_gate_lock_;
  sync::condvar pool_gate_cv_;
  std::uint64_t gate_epoch_ = 0;
  std::uint64_t released_epoch_ = 0;
  std::size_t blocking_running_ = 0;
  std::size_t blocking_peak_ = 0;
  std::vector<platform::thread> extra_threads_;
  bool quiescent_ = false;
  std::size_t failures_ = 0;
};

}  // namespace weft::properties::rtmodel
