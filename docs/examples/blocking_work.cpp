// docs/examples/blocking_work.cpp — synchronous work on the blocking pool.
//
// spawn_blocking(fn) runs fn on a blocking-pool thread (never on a worker) and returns a
// join_handle: the result, or `panicked` if fn threw. The pool's capacity is governed: at most
// max_threads threads and max_queued waiting callbacks; past that a submission is refused at once
// with `rejected`/`full` and its callback never runs. This program shows all three, with a pool of
// one thread and one queue slot, and a task that backs off and retries on `full`.
// Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

// Stands in for a blocking library call (a file read, a hash, a legacy client).
int slow_square(int x) {
  std::this_thread::sleep_for(1ms);
  return x * x;
}

// A one-shot latch the example uses to hold the pool's only thread.
struct latch {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard<std::mutex> hold(m);
      open = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> hold(m);
    cv.wait(hold, [this] { return open; });
  }
};

}  // namespace

int main() {
  auto rt = weft::runtime::builder().workers(2).blocking_capacity(1, 1).build();
  auto sched = rt.scheduler();
  bool ok = true;

  // 1. A result, awaited from a task.
  const int nine = rt.block_on([]() -> weft::task<int> {
    auto r = co_await weft::builtins::current().scheduler().spawn_blocking([] { return slow_square(3); });
    co_return r.value();
  });
  std::printf("slow_square(3) = %d\n", nine);
  ok = ok && nine == 9;

  // 2. A callback that throws: the handle says `panicked` and carries the exception.
  auto failed = sched.spawn_blocking([]() -> int { throw std::runtime_error("disk on fire"); }).join();
  std::string what;
  if (!failed && failed.error().is_panicked()) {
    try {
      std::rethrow_exception(failed.error().exception());
    } catch (const std::exception& e) {
      what = e.what();
    }
  }
  std::printf("throwing callback: %s (%s)\n", failed ? "value" : weft::to_string(failed.error().get_kind()), what.c_str());
  ok = ok && what == "disk on fire";

  // 3. Saturation. Hold the only thread, fill the only queue slot; the next call is refused.
  latch hold;
  std::atomic<bool> holding{false};
  auto busy = sched.spawn_blocking([&] {
    holding = true;
    hold.wait();
  });
  while (!holding) std::this_thread::yield();
  auto queued = sched.spawn_blocking([] { return slow_square(4); });
  std::atomic<bool> refused_ran{false};
  auto refused = sched.spawn_blocking([&] { refused_ran = true; });
  auto answer = refused.join();  // refused at once: join does not wait
  const bool full = !answer && answer.error().is_rejected() && answer.error().rejection_reason() == weft::queue_error::full;
  std::printf("third call while saturated: %s\n", full ? "rejected (full)" : "unexpected");
  ok = ok && full;

  // A task that retries with back-off instead of giving up; it succeeds once the pool drains.
  auto patient = sched.spawn([]() -> weft::task<int> {
    int attempts = 0;
    for (;;) {
      ++attempts;
      auto r = co_await weft::builtins::current().scheduler().spawn_blocking([] { return slow_square(5); });
      if (r) co_return attempts;
      if (!r.error().is_rejected() || r.error().rejection_reason() != weft::queue_error::full) co_return -1;
      co_await weft::sleep(1ms);  // `full` is about now: try again later
    }
  });
  hold.release();
  ok = ok && busy.join().has_value();
  ok = ok && queued.join().value() == 16;
  const int attempts = patient.join().value();
  std::printf("the patient task got its result after %d attempt(s)\n", attempts);
  ok = ok && attempts >= 1 && !refused_ran;

  ok = ok && std::move(rt).stop().is_complete();
  if (!ok) {
    std::fprintf(stderr, "blocking_work: wrong result\n");
    return 1;
  }
  return 0;
}
