// weft/builtins.hpp — the services every task on a runtime worker can reach.
//
// builtins::current() on a worker thread gives that worker's scheduler (spawn() lands on this
// worker), its clock, its telemetry sink and a runtime_operations handle. Off a worker it throws
// usage_error (try_current() returns null). Like schedulers, builtins never keep a runtime alive.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <memory>

#include <weft/platform/clock.hpp>
#include <weft/runtime_operations.hpp>
#include <weft/scheduler.hpp>
#include <weft/telemetry.hpp>
#include <weft/thread_aware.hpp>

namespace weft {

// The runtime's clock (the seam clock: virtual time in the simulator).
class clock {
 public:
  instant now() const noexcept { return platform::clock::now(); }
};

class builtins {
 public:
  builtins(weft::scheduler sched, std::shared_ptr<detail::runtime_core> core, std::size_t index) noexcept
      : scheduler_(std::move(sched)),
        telemetry_(core ? core->config().telemetry : nullptr),
        operations_(std::move(core)),
        worker_{index} {}

  // This worker's builtins; throws usage_error off a runtime worker.
  static builtins& current();
  static builtins* try_current() noexcept;

  weft::scheduler& scheduler() noexcept { return scheduler_; }
  const weft::clock& clock() const noexcept { return clock_; }
  // The runtime's sink (the same for every worker), also through a copy used off the worker.
  telemetry_sink& telemetry() const noexcept { return *telemetry_; }
  worker_id worker() const noexcept { return worker_; }
  const runtime_operations& operations() const noexcept { return operations_; }

  // Installed on a worker thread for the worker's lifetime (runtime internals).
  static void install(builtins* b) noexcept;

 private:
  weft::scheduler scheduler_;
  std::shared_ptr<telemetry_sink> telemetry_;  // never null: the core always has a sink
  runtime_operations operations_;
  weft::clock clock_;
  worker_id worker_;
};

}  // namespace weft
