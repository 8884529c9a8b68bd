// weft-bench-micro — Google Benchmark micro-costs of weft's event loop, one thread each:
//   spawn + join of a trivial task; waker wake (coalesced, and wake + re-poll); remote inbox push
//   and drain; timer arm + fire, and arm + cancel.
// Run: weft-bench-micro [--benchmark_min_time=0.01] [--benchmark_filter=REGEX]
#include <benchmark/benchmark.h>
#include <weft/weft.hpp>

#include <cstdint>

using namespace std::chrono_literals;

namespace {

weft::task<int> trivial() { co_return 1; }

// spawn + co_await of one trivial task on the loop driving the caller.
void event_loop_spawn_join(benchmark::State& state) {
  weft::event_loop loop;
  loop.block_on([&]() -> weft::task<void> {
    for (auto _ : state) {
      auto r = co_await loop.spawn(trivial());
      benchmark::DoNotOptimize(r);
    }
  }());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(event_loop_spawn_join);

// wake() of a task that is running: it is already scheduled-or-running, so the wake coalesces.
void waker_wake_coalesced(benchmark::State& state) {
  weft::event_loop loop;
  loop.block_on([&]() -> weft::task<void> {
    const weft::waker w = co_await weft::current_waker();
    for (auto _ : state) w.wake();
  }());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(waker_wake_coalesced);

// A clone of a task's waker, then its drop (reference count up and down).
void waker_clone_drop(benchmark::State& state) {
  weft::event_loop loop;
  loop.block_on([&]() -> weft::task<void> {
    const weft::waker w = co_await weft::current_waker();
    for (auto _ : state) {
      weft::waker copy = w;
      benchmark::DoNotOptimize(copy);
    }
  }());
}
BENCHMARK(waker_clone_drop);

// yield_now: the task wakes itself, goes to the back of the microtask queue and is polled again.
void waker_wake_and_repoll(benchmark::State& state) {
  weft::event_loop loop;
  loop.block_on([&]() -> weft::task<void> {
    for (auto _ : state) co_await weft::yield_now();
  }());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(waker_wake_and_repoll);

// `batch` macrotasks pushed through the loop's remote inbox (thread_handle), then drained and run.
void remote_inbox_push_drain(benchmark::State& state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  weft::event_loop loop;
  const weft::thread_handle handle = loop.handle();
  std::uint64_t ran = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < batch; ++i) {
      if (!handle.queue_macrotask([&ran] { ++ran; })) state.SkipWithError("inbox refused a macrotask");
    }
    loop.run_ready_tasks();
  }
  if (ran != static_cast<std::uint64_t>(state.iterations()) * batch) state.SkipWithError("lost macrotasks");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch));
}
BENCHMARK(remote_inbox_push_drain)->Arg(1)->Arg(64);

// A zero-delay timer armed and fired (its callback runs as a macrotask).
void timer_arm_fire(benchmark::State& state) {
  weft::event_loop loop;
  std::uint64_t fired = 0;
  for (auto _ : state) {
    loop.set_timeout(weft::duration::zero(), [&fired] { ++fired; });
    loop.run_until_stalled();
  }
  if (fired != static_cast<std::uint64_t>(state.iterations())) state.SkipWithError("timer did not fire");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(timer_arm_fire);

// A timer armed far in the future and cancelled, with `pending` other timers in the heap.
void timer_arm_cancel(benchmark::State& state) {
  weft::event_loop loop;
  for (std::int64_t i = 0; i < state.range(0); ++i) loop.set_timeout(1h + std::chrono::milliseconds(i), [] {});
  for (auto _ : state) {
    const weft::timer_id id = loop.set_timeout(1h, [] {});
    benchmark::DoNotOptimize(loop.clear_timer(id));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(timer_arm_cancel)->Arg(0)->Arg(10'000);

// A task sleeping 0 ns past a deadline that has already passed: the ready path of sleep.
void sleep_elapsed_deadline(benchmark::State& state) {
  weft::event_loop loop;
  loop.block_on([&]() -> weft::task<void> {
    for (auto _ : state) co_await weft::sleep(weft::duration::zero());
  }());
}
BENCHMARK(sleep_elapsed_deadline);

}  // namespace

BENCHMARK_MAIN();
