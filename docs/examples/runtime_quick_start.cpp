// docs/examples/runtime_quick_start.cpp — a weft::runtime in twenty lines.
//
// Builds a runtime of two workers, runs a task that fans out over the workers and calls a
// blocking function on the blocking pool, waits for it with block_on (which may borrow the
// caller's locals), and stops the runtime, checking that the stop was complete. Exits non-zero
// on a wrong result.
#include <weft/weft.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

using namespace std::chrono_literals;

int main() {
  auto rt = weft::runtime::builder().workers(2).build();

  const std::vector<int> numbers{1, 2, 3, 4, 5, 6, 7, 8};  // borrowed by the task below

  const int total = rt.block_on([&]() -> weft::task<int> {
    weft::scheduler& here = weft::builtins::current().scheduler();
    // Each half on a worker the runtime picks; the factory runs on that worker.
    auto first = here.spawn_anywhere([&]() -> weft::task<int> {
      co_await weft::sleep(1ms);
      co_return std::accumulate(numbers.begin(), numbers.begin() + 4, 0);
    });
    auto second = here.spawn_anywhere([&]() -> weft::task<int> {
      co_return std::accumulate(numbers.begin() + 4, numbers.end(), 0);
    });
    // Synchronous work goes to the blocking pool, never onto a worker.
    auto bonus = co_await here.spawn_blocking([] { return 100; });
    auto a = co_await first;
    auto b = co_await second;
    co_return a.value() + b.value() + bonus.value();
  });

  const weft::stop_outcome out = std::move(rt).stop();
  std::printf("total %d, stop %s\n", total, out.is_complete() ? "complete" : "not complete");
  if (total != 136 || !out.is_complete()) {
    std::fprintf(stderr, "runtime_quick_start: wrong result\n");
    return 1;
  }
  return 0;
}
