// docs/examples/quick_start.cpp — the smallest useful weft program.
//
// Drives one event_loop on the main thread: block_on a task, spawn tasks that sleep concurrently
// and join them, then spawn from outside any task and run the loop to idle. Exits non-zero if any
// result is wrong.
#include <weft/weft.hpp>

#include <cstdio>
#include <utility>
#include <vector>

using namespace std::chrono_literals;

// A task is lazy: calling answer() only creates it; it runs when spawned or awaited.
weft::task<int> answer() {
  co_await weft::sleep(10ms);  // suspends this task; the loop runs other work meanwhile
  co_return 42;
}

// Spawns `n` copies of answer() on the current loop and adds up their results.
weft::task<int> sum_of_answers(int n) {
  std::vector<weft::join_handle<int>> handles;
  for (int i = 0; i < n; ++i) {
    weft::join_handle<int> h = weft::spawn(answer());  // spawned on the loop running this task
    handles.push_back(std::move(h));
  }
  int total = 0;
  for (auto& h : handles) {
    weft::expected<int, weft::join_error> r = co_await h;  // the value, or why there is none
    if (!r) co_return -1;
    total += *r;
  }
  co_return total;
}

int main() {
  weft::event_loop loop;  // belongs to this thread

  // block_on drives the loop until the task finishes and hands back its value.
  const int one = loop.block_on(answer());

  // Ten tasks sleeping 10 ms each finish together: they sleep concurrently on one thread.
  const weft::instant start = weft::platform::clock::now();
  const int ten = loop.block_on(sum_of_answers(10));
  const auto elapsed = weft::platform::clock::now() - start;

  // Spawning from outside a task: the task waits in the loop until something drives it.
  weft::join_handle<int> later = loop.spawn(answer());
  loop.run();                         // runs until nothing is ready, queued or armed
  weft::expected<int, weft::join_error> joined = later.join();  // finished: does not block

  std::printf("answer: %d\nsum of ten answers: %d (in %lld ms)\njoined: %d\n", one, ten,
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()),
              joined ? *joined : -1);

  bool ok = one == 42 && ten == 420 && joined && *joined == 42;
  ok = ok && elapsed >= 10ms;  // a sleep never ends early
  if (!ok) {
    std::fprintf(stderr, "quick_start: wrong result\n");
    return 1;
  }
  return 0;
}
