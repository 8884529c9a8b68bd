// docs/examples/cross_thread.cpp — sending work to a loop from other threads.
//
// A thread_handle is the loop's address for other threads: queue_macrotask answers at once with
// accepted, `full` (the bounded remote inbox has no room now) or `closed` (the loop is not
// accepting work). This program shows all three:
//   1. four loop threads (spawn_loop_thread), each with its own loop, push 500 macrotasks each into the main
//      loop, whose inbox holds only 16; on `full` a producer sleeps briefly and retries;
//   2. after run() returned, the inbox is closed: a submission is refused and its callable is
//      destroyed without running;
//   3. the next driving call reopens the inbox: a submission is accepted and runs.
// Exits non-zero if anything was lost, run twice, or answered unexpectedly.
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

using namespace std::chrono_literals;

namespace {

constexpr int producers = 4;
constexpr int items_per_producer = 500;

std::atomic<int> full_answers{0};

// Runs on a worker's own loop: sends `count` macrotasks to `target`, retrying on `full`.
weft::task<void> produce(weft::thread_handle target, int* received, int count) {
  for (int i = 0; i < count; ++i) {
    for (;;) {
      // The callable runs on the target loop's thread; only that thread touches *received.
      weft::submit_result sent = target.queue_macrotask([received] { ++*received; });
      if (sent) break;
      if (sent.error() == weft::queue_error::closed) co_return;  // cannot happen here: see main
      full_answers.fetch_add(1, std::memory_order_relaxed);
      co_await weft::sleep(50us);  // back off; the refused callable was already destroyed
    }
  }
}

}  // namespace

int main() {
  weft::event_loop::options opts;
  opts.inbox_capacity = 16;  // small on purpose, to meet `full`
  weft::event_loop loop(opts);
  int received = 0;  // main thread only

  // 1. Producers. The main loop's run() keeps going while a loop thread it started is alive, so its
  //    inbox stays open until every producer finished.
  for (int p = 0; p < producers; ++p) {
    loop.spawn_loop_thread([target = loop.handle(), &received](weft::event_loop& own) {
      // Detached: the worker's loop owns the task, and its run() goes on until the task is done.
      own.spawn(produce(target, &received, items_per_producer)).detach();
    });
  }
  loop.run();
  std::printf("received %d of %d macrotasks (%d `full` answers on the way)\n", received,
              producers * items_per_producer, full_answers.load());

  // 2. run() returned: the inbox is closed. The refused callable is destroyed unrun, before
  //    queue_macrotask returns, on the submitting thread.
  auto witness = std::make_shared<int>(0);
  weft::submit_result after_run;
  std::thread late([&] { after_run = loop.handle().queue_macrotask([witness] { ++*witness; }); });
  late.join();
  const bool refused = !after_run && after_run.error() == weft::queue_error::closed;
  std::printf("after run(): %s\n", after_run ? "accepted" : weft::to_string(after_run.error()));

  // 3. Any driving call reopens the inbox; what is accepted now runs at the next drive.
  loop.run_until_stalled();
  weft::submit_result reopened;
  std::thread again([&] { reopened = loop.handle().queue_macrotask([witness] { ++*witness; }); });
  again.join();
  loop.run();
  std::printf("after reopening: %s, ran %d time(s)\n", reopened ? "accepted" : "refused", *witness);

  const bool ok = received == producers * items_per_producer && refused && reopened &&
                  *witness == 1 && witness.use_count() == 1;
  if (!ok) {
    std::fprintf(stderr, "cross_thread: wrong result\n");
    return 1;
  }
  return 0;
}
