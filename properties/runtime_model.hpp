// properties/runtime_model.hpp — the reference model of a runtime, as one driver thread sees it.
//
// The model is deliberately small: a list of tasks (what was submitted, what may still happen to
// it), the admission state, the local domain's queue and the blocking pool's occupancy. It never
// looks at the system under test.
//
// Precision comes from *quiescence*: the driver's `sleep` blocks it on the virtual clock, and the
// simulator advances virtual time only when every fiber is blocked — so when the sleep returns,
// every worker and pool thread has run out of work. Between two quiescent points an outcome may
// still be racing (a value task aborted right after its spawn: `ok` or `cancelled`); the model
// keeps the *set* of allowed outcomes and, at a quiescent point, which tasks must have finished.
//
// Per task, the allowed outcomes grow only by events the driver caused:
//   accepted value / panicker  {ok} / {panicked}
//   accepted parked / sleeper / blocking  {}  (nothing can finish it yet)
//   abort (pending)        + cancelled
//   wake (parked)          + ok
//   time reaches deadline  + ok        (sleeper; not before: no early timer)
//   release (blocking)     + ok
//   request_stop / stop    + cancelled (every pending task)
//   refused                {rejected: closed | full}, finished at once
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace weft::properties::rtmodel {

enum class task_kind : std::uint8_t { value, parked, sleeper, panicker, blocking };
enum class via : std::uint8_t { spawn, spawn_anywhere, cross_thread, spawn_blocking };

inline const char* to_string(task_kind k) {
  switch (k) {
    case task_kind::value: return "value";
    case task_kind::parked: return "parked";
    case task_kind::sleeper: return "sleeper";
    case task_kind::panicker: return "panicker";
    case task_kind::blocking: return "blocking";
  }
  return "?";
}
inline const char* to_string(via v) {
  switch (v) {
    case via::spawn: return "spawn";
    case via::spawn_anywhere: return "spawn_anywhere";
    case via::cross_thread: return "cross_thread_spawn";
    case via::spawn_blocking: return "spawn_blocking";
  }
  return "?";
}

// One bit per terminal outcome.
enum outcome : std::uint8_t {
  ok = 1,
  panicked = 2,
  cancelled = 4,
  rejected_closed = 8,
  rejected_full = 16,
};
inline std::string describe(std::uint8_t set) {
  std::string s = "{";
  const char* names[] = {"ok", "panicked", "cancelled", "rejected(closed)", "rejected(full)"};
  for (int b = 0; b < 5; ++b) {
    if ((set & (1u << b)) == 0) continue;
    if (s.size() > 1) s += ",";
    s += names[b];
  }
  return s + "}";
}

struct config {
  std::size_t workers = 1;
  std::size_t blocking_threads = 1;  // per pool (one shared pool)
  std::size_t blocking_queued = 1;
  std::size_t domain_capacity = 1;
  std::uint64_t sim_seed = 0;
  friend std::ostream& operator<<(std::ostream& os, const config& c) {
    return os << "workers=" << c.workers << " blocking=" << c.blocking_threads << "+" << c.blocking_queued
              << " domain_capacity=" << c.domain_capacity << " sim_seed=" << c.sim_seed;
  }
};

struct task_entry {
  task_kind kind = task_kind::value;
  bool accepted = false;
  bool settled = false;          // must have finished by now
  std::uint8_t allowed = 0;      // outcomes it may end with
  bool aborted = false;
  bool woken = false;
  bool released = false;         // blocking: its gate opened
  std::int64_t deadline_ms = 0;  // sleeper: model time of its deadline
  std::size_t worker = 0;        // where round-robin placement puts it
};

struct model {
  explicit model(const config& c) : cfg(c) {}

  config cfg;
  std::int64_t now_ms = 0;
  bool admitting = true;
  bool stop_requested = false;
  bool stopped = false;
  std::size_t next_worker = 0;
  std::vector<task_entry> tasks;
  // local domain
  std::size_t domain_queued = 0;
  std::size_t domain_ran = 0;
  std::vector<bool> dispatch_answers;  // accepted?, in order
  // blocking pool (gated jobs only, see the Release command)
  std::size_t gated_in_flight = 0;     // accepted, not released
  bool pool_settling = false;          // released jobs may still be finishing (until quiescence)

  std::size_t capacity() const { return cfg.blocking_threads + cfg.blocking_queued; }

  void submit(task_kind kind, via how, std::int64_t sleep_ms) {
    task_entry t;
    t.kind = kind;
    if (how != via::spawn_blocking || admitting) {
      t.worker = next_worker % cfg.workers;
      ++next_worker;  // round robin: every pick consumes a slot
    }
    if (!admitting) {
      t.allowed = rejected_closed;
      t.settled = true;
    } else if (how == via::spawn_blocking && gated_in_flight >= capacity()) {
      t.allowed = rejected_full;
      t.settled = true;
    } else {
      t.accepted = true;
      switch (kind) {
        case task_kind::value: t.allowed = ok; break;
        case task_kind::panicker: t.allowed = panicked; break;
        case task_kind::parked: t.allowed = 0; break;
        case task_kind::sleeper:
          t.allowed = 0;
          t.deadline_ms = now_ms + sleep_ms;
          break;
        case task_kind::blocking:
          t.allowed = 0;
          ++gated_in_flight;
          break;
      }
    }
    tasks.push_back(t);
  }

  void abort(std::size_t i) {
    auto& t = tasks[i];
    if (!t.settled) t.allowed |= cancelled;
    t.aborted = true;
  }
  void wake(std::size_t i) {
    auto& t = tasks[i];
    if (!t.settled && !t.woken) t.allowed |= ok;
    t.woken = true;
  }
  void release_blocking() {
    for (auto& t : tasks) {
      if (t.kind != task_kind::blocking || !t.accepted || t.released) continue;
      t.released = true;
      if (!t.settled) t.allowed |= ok;
    }
    if (gated_in_flight > 0) pool_settling = true;
    gated_in_flight = 0;
  }
  void request_stop() {
    admitting = false;
    if (stop_requested) return;  // idempotent
    stop_requested = true;
    for (auto& t : tasks) {
      if (!t.settled) t.allowed |= cancelled;
    }
  }
  // The driver slept `ms` of virtual time: everything that could run, ran.
  void sleep(std::int64_t ms) {
    now_ms += ms;
    for (auto& t : tasks) {
      if (t.settled) continue;
      if (t.kind == task_kind::sleeper && t.deadline_ms <= now_ms) t.allowed |= ok;
      if (can_finish_at_quiescence(t)) t.settled = true;
    }
    pool_settling = false;
    domain_settle_nothing();
  }
  void stop() {
    release_blocking();  // stop() waits for running blocking work: the driver opens the gates first
    request_stop();
    stopped = true;
    for (auto& t : tasks) t.settled = true;
    pool_settling = false;
  }

  // local domain
  void dispatch() {
    const bool accepted = domain_queued < cfg.domain_capacity;
    if (accepted) ++domain_queued;
    dispatch_answers.push_back(accepted);
  }
  void drive_domain() {
    domain_ran += domain_queued;
    domain_queued = 0;
  }

  std::size_t blocking_running_at_quiescence() const { return std::min(gated_in_flight, cfg.blocking_threads); }

 private:
  bool can_finish_at_quiescence(const task_entry& t) const {
    if (t.aborted || stop_requested) return true;
    switch (t.kind) {
      case task_kind::value:
      case task_kind::panicker: return true;
      case task_kind::parked: return t.woken;
      case task_kind::sleeper: return t.deadline_ms < now_ms;
      case task_kind::blocking: return t.released;
    }
    return false;
  }
  void domain_settle_nothing() {}  // the domain runs only when the driver drives it
};

}  // namespace weft::properties::rtmodel
