// docs/examples/micro_macro_order.cpp — the order in which one loop runs its work.
//
// Queues a mix of microtasks, macrotasks, a spawned task that yields, an already-due timer and a
// macrotask from another thread, runs the loop, and prints what ran in which turn. The order is
// fixed by the turn (driver events, remote inbox, every microtask, one macrotask), so the program
// compares it with the expected list and exits non-zero on any difference.
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main() {
  weft::event_loop loop;
  std::vector<std::string> ran;
  auto note = [&ran](const char* what) {
    std::printf("  %s\n", what);
    ran.emplace_back(what);
  };

  loop.queue_macrotask([&] {
    note("macrotask 1");
    // Work queued by a macrotask: the microtask runs before the next macrotask, the new
    // macrotask goes to the back of the queue.
    loop.queue_microtask([&] { note("microtask queued by macrotask 1"); });
    loop.queue_macrotask([&] { note("macrotask 3 (queued by macrotask 1)"); });
  });
  loop.queue_macrotask([&] { note("macrotask 2"); });
  loop.queue_microtask([&] { note("microtask 1"); });

  // A spawned task's first poll is a microtask; yield_now puts it at the back of the microtask
  // queue, so it continues in the same checkpoint, after the microtasks queued before it.
  auto task = loop.spawn([&]() -> weft::task<void> {
    note("task: first poll");
    co_await weft::yield_now();
    note("task: after yield_now");
  });
  loop.queue_microtask([&] { note("microtask 2"); });

  // A timer callback is a macrotask; this one is due at the first turn, when expired timers join
  // the macrotask queue behind what is already there.
  loop.set_timeout(0ms, [&] { note("timer (0 ms)"); });

  // Another thread's macrotask waits in the remote inbox until the next turn drains it.
  std::thread sender([h = loop.handle(), &note]() mutable {  // queue_macrotask is not const
    if (!h.queue_macrotask([&note] { note("remote macrotask"); })) std::abort();
  });
  sender.join();

  std::printf("run():\n");
  loop.run();

  const std::vector<std::string> expected = {
      // turn 1: timers expire, the inbox drains, then the whole checkpoint, then one macrotask
      "microtask 1",
      "task: first poll",
      "microtask 2",
      "task: after yield_now",
      "macrotask 1",
      // turn 2
      "microtask queued by macrotask 1",
      "macrotask 2",
      // turns 3, 4, 5: one macrotask each, in queue order
      "timer (0 ms)",
      "remote macrotask",
      "macrotask 3 (queued by macrotask 1)",
  };
  if (ran != expected || !task.is_finished()) {
    std::fprintf(stderr, "micro_macro_order: unexpected order\n");
    return 1;
  }
  std::printf("order as expected\n");
  return 0;
}
