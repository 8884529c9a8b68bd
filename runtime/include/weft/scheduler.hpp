// weft/scheduler.hpp — placing work on a runtime's workers.
//
// A scheduler is a cheap, copyable handle. runtime::scheduler() places work anywhere; the one in
// builtins (a worker's own) places spawn() on *its* worker, even when copied to and used from
// another thread. Every submission answers at once with a join_handle; a refused one is already
// finished as `rejected` (closed: the runtime is stopping; full: the destination's inbox or the
// blocking pool is at capacity), and its factory never runs.
//
// Factories: spawn takes a callable that returns a weft::task<T>. The callable is moved to the
// destination worker and invoked there, at the task's first poll, so non-thread-safe state the
// task needs can be created in place. Tasks never migrate: created, polled, woken, cancelled and
// destroyed on their worker.
#pragma once

#include <weft/compiler_support.hpp>

#include <concepts>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/detail/blocking_job.hpp>
#include <weft/detail/runtime_core.hpp>
#include <weft/event_loop.hpp>
#include <weft/join_handle.hpp>
#include <weft/task.hpp>
#include <weft/thread_aware.hpp>

namespace weft {

namespace detail {
template <class F>
using factory_value_t = typename std::invoke_result_t<F&>::value_type;
template <class F, class I>
using input_factory_value_t = typename std::invoke_result_t<F&, I&&>::value_type;

// A factory over a factory and its input: at the first poll (on the destination worker) it
// relocates the input there, then runs the factory on it. Both live in the task's cell until the
// task's frame is gone (factory_cell), so the task may refer to them.
template <class F, class I>
class factory_with_input {
 public:
  factory_with_input(F factory, I input, worker_id from, worker_id to)
      : factory_(std::move(factory)), input_(std::move(input)), from_(from), to_(to) {}
  std::invoke_result_t<F&, I&&> operator()() {
    thread_aware_traits<I>::relocate(input_, from_, to_);
    return factory_(std::move(input_));
  }

 private:
  F factory_;
  I input_;
  worker_id from_;
  worker_id to_;
};
}  // namespace detail

class scheduler {
 public:
  static constexpr std::size_t any_worker = std::numeric_limits<std::size_t>::max();

  // An empty scheduler: every submission is rejected as closed.
  scheduler() noexcept = default;
  scheduler(std::shared_ptr<detail::runtime_core> core, std::size_t worker) noexcept
      : core_(std::move(core)), worker_(worker) {}

  // On a worker's scheduler: that worker. On the runtime's: a worker the runtime picks.
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto spawn(F&& factory) -> join_handle<detail::factory_value_t<std::decay_t<F>>> {
    using T = detail::factory_value_t<std::decay_t<F>>;
    if (!core_) return join_handle<T>::rejected();
    const std::size_t index = worker_ == any_worker ? core_->pick_worker() : worker_;
    return core_->submit_task(index, std::forward<F>(factory));
  }

  // The runtime picks the worker.
  template <class F>
    requires detail::task_factory<std::decay_t<F>>
  auto spawn_anywhere(F&& factory) -> join_handle<detail::factory_value_t<std::decay_t<F>>> {
    using T = detail::factory_value_t<std::decay_t<F>>;
    if (!core_) return join_handle<T>::rejected();
    return core_->submit_task(core_->pick_worker(), std::forward<F>(factory));
  }

  // The runtime picks the worker; `input` is relocated there before factory(input) runs.
  template <class I, class F>
    requires thread_aware<std::decay_t<I>> && std::invocable<std::decay_t<F>&, std::decay_t<I>&&>
  auto spawn_anywhere(I&& input, F&& factory)
      -> join_handle<detail::input_factory_value_t<std::decay_t<F>, std::decay_t<I>>> {
    using T = detail::input_factory_value_t<std::decay_t<F>, std::decay_t<I>>;
    if (!core_) return join_handle<T>::rejected();
    const std::size_t index = core_->pick_worker();
    return core_->submit_task(index, detail::factory_with_input<std::decay_t<F>, std::decay_t<I>>(std::decay_t<F>(std::forward<F>(factory)),
                                                                    std::decay_t<I>(std::forward<I>(input)),
                                                                    here(), worker_id{index}));
  }

  // One task per worker (the factory is copied to each), a handle each, in worker order.
  template <class F>
    requires detail::task_factory<std::decay_t<F>> && std::copy_constructible<std::decay_t<F>>
  auto spawn_everywhere(F&& factory) -> std::vector<join_handle<detail::factory_value_t<std::decay_t<F>>>> {
    using T = detail::factory_value_t<std::decay_t<F>>;
    std::vector<join_handle<T>> handles;
    if (!core_) return handles;
    handles.reserve(core_->worker_count());
    const std::decay_t<F> prototype(std::forward<F>(factory));
    for (std::size_t i = 0; i < core_->worker_count(); ++i) {
      handles.push_back(core_->submit_task(i, std::decay_t<F>(prototype)));
    }
    return handles;
  }

  // One task per worker, each with its own copy of `input`, relocated to that worker.
  template <class I, class F>
    requires thread_aware<std::decay_t<I>> && std::copy_constructible<std::decay_t<I>> &&
             std::copy_constructible<std::decay_t<F>> && std::invocable<std::decay_t<F>&, std::decay_t<I>&&>
  auto spawn_everywhere(I&& input, F&& factory)
      -> std::vector<join_handle<detail::input_factory_value_t<std::decay_t<F>, std::decay_t<I>>>> {
    using T = detail::input_factory_value_t<std::decay_t<F>, std::decay_t<I>>;
    std::vector<join_handle<T>> handles;
    if (!core_) return handles;
    handles.reserve(core_->worker_count());
    const std::decay_t<F> factory_prototype(std::forward<F>(factory));
    const std::decay_t<I> input_prototype(std::forward<I>(input));
    const worker_id from = here();
    for (std::size_t i = 0; i < core_->worker_count(); ++i) {
      handles.push_back(core_->submit_task(
          i, detail::factory_with_input<std::decay_t<F>, std::decay_t<I>>(std::decay_t<F>(factory_prototype), std::decay_t<I>(input_prototype),
                                            from, worker_id{i})));
    }
    return handles;
  }

  // Runs fn on a blocking pool; the handle yields its result (or panicked if it threw). Refused
  // with `full` when the pool's threads and queue are at capacity, `closed` when stopping; a
  // refused fn never runs. Aborting the handle before fn started means fn never runs; once it
  // runs it finishes, and its result is dropped.
  template <class F>
    requires std::invocable<std::decay_t<F>&>
  auto spawn_blocking(F&& fn) -> join_handle<std::invoke_result_t<std::decay_t<F>&>> {
    using R = std::invoke_result_t<std::decay_t<F>&>;
    if (!core_ || !core_->admitting()) return join_handle<R>::rejected(queue_error::closed);
    std::size_t index = worker_;
    if (index == any_worker) index = core_->current_worker().value_or(core_->pick_worker());
    auto state = std::make_shared<detail::blocking_state<R>>();
    // The awaiting task goes first. Were the callback submitted first, a pool thread could start
    // it before a concurrent stop refused the task: a `rejected` handle for a callback that ran.
    join_handle<R> waiter = core_->submit_task(index, detail::await_blocking<R>(state));
    if (waiter.is_finished()) return waiter;  // refused (or already cancelled): fn is never submitted
    const submit_result admitted = core_->pool_for(index).submit(
        new detail::blocking_job<R, std::decay_t<F>>(state, std::forward<F>(fn)));
    if (!admitted) {
      waiter.abort();  // it would wait forever for a job that does not exist; its outcome is unread
      return join_handle<R>::rejected(admitted.error());
    }
    return waiter;
  }

  // The worker this scheduler is bound to (nullopt for the runtime-wide scheduler).
  std::optional<std::size_t> worker() const noexcept {
    return worker_ == any_worker ? std::nullopt : std::optional<std::size_t>(worker_);
  }
  std::size_t worker_count() const noexcept { return core_ ? core_->worker_count() : 0; }
  bool valid() const noexcept { return core_ != nullptr; }

 private:
  worker_id here() const noexcept {
    const auto current = core_->current_worker();
    return current ? worker_id{*current} : external_worker;
  }

  std::shared_ptr<detail::runtime_core> core_;
  std::size_t worker_ = any_worker;
};

}  // namespace weft
