// weft/local_domain.hpp — an event loop that owns no thread: its host drives it.
//
// Create it on the host thread (a UI or render thread, a game loop) and drive it from there with
// run_n(steps) or run_for(budget); neither blocks waiting for work. Other threads submit through
// a copyable local_spawner: spawn (with a join handle), dispatch(fn) and dispatch_future(factory)
// (fire-and-forget). Tasks spawned into a domain run only on its host thread, so they may hold
// thread-bound state. Exceptions in dispatched work are reported to telemetry (callbacks) or
// become the task's panicked outcome; the domain stays drivable.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/queue_error.hpp>

namespace weft {

// What one run_n / run_for call did.
struct run_stats {
  std::size_t drive_steps = 0;     // loop turns that ran
  std::size_t inbox_commands = 0;  // items taken from the cross-thread inbox
  duration elapsed{};              // on the seam clock
};

class local_spawner {
 public:
  local_spawner() noexcept = default;
  explicit local_spawner(thread_handle target) noexcept : target_(std::move(target)) {}

  // Spawns the factory's task on the domain (the factory runs there). Rejected once the domain is
  // gone (closed) or its inbox is full.
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto spawn(F&& factory) {
    using T = typename std::invoke_result_t<std::decay_t<F>&>::value_type;
    if (!target_.valid()) return join_handle<T>::rejected();
    return detail::spawn_remote(target_.shared(), std::forward<F>(factory));
  }
  // Runs fn on the host thread at a later drive. Fire-and-forget.
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  submit_result dispatch(F&& fn) const {
    return target_.queue_macrotask(std::forward<F>(fn));
  }
  // Spawns the factory's task on the domain with no handle. Fire-and-forget.
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  submit_result dispatch_future(F&& factory) {
    auto handle = spawn(std::forward<F>(factory));
    if (handle.is_finished()) {
      auto outcome = handle.join();
      if (!outcome && outcome.error().is_rejected()) return unexpected(outcome.error().rejection_reason());
    }
    return {};  // the handle is dropped: the task is detached
  }

  const thread_handle& handle() const noexcept { return target_; }

 private:
  thread_handle target_;
};

class local_domain {
 public:
  local_domain() = default;
  explicit local_domain(event_loop::options opts) : loop_(std::move(opts)) {}

  // Runs up to `steps` loop turns, stopping early when nothing is ready. run_n(0) does nothing.
  // Returns the turns it ran.
  std::size_t run_n(std::size_t steps);
  // Runs turns while something is ready and the budget is not spent; the budget is checked
  // before each turn, so elapsed may exceed it by one turn's work. A zero budget does nothing.
  run_stats run_for(duration budget);
  template <class Rep, class Period>
  run_stats run_for(std::chrono::duration<Rep, Period> budget) {
    return run_for(std::chrono::duration_cast<duration>(budget));
  }

  local_spawner spawner() const noexcept { return local_spawner(loop_.handle()); }

  // Host thread: spawn directly.
  template <class T>
  join_handle<T> spawn(task<T> t) {
    return loop_.spawn(std::move(t));
  }
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto spawn(F&& factory) {
    return loop_.spawn(std::forward<F>(factory));
  }

  event_loop& loop() noexcept { return loop_; }

 private:
  event_loop loop_;
};

}  // namespace weft
