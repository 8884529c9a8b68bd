// docs/examples/shutdown_variants.cpp — the ways a runtime ends, and what each reports.
//
//   1. stop() after everything finished              complete
//   2. stop() with a task still waiting               incomplete, tasks_cancelled == 1 (the task
//                                                     is cancelled on its own worker)
//   3. stop_graceful()                                accepted work finishes first: complete
//   4. drain(deadline) on work that will not finish   timed_out, nothing aborted; the work may
//                                                     still finish, then stop() is complete
//   5. request_stop() from a worker                   never waits; the owner's stop() then reports
//   6. stop() from a worker                           error: called_from_worker (no deadlock);
//                                                     the owner's stop() then reports complete
// Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

namespace {

// A leaf that waits until another thread opens it.
class door {
 public:
  bool poll_ready(const weft::waker& w) {
    std::lock_guard<std::mutex> hold(lock_);
    if (open_) return true;
    waiter_ = w;
    return false;
  }
  void await_resume() const noexcept {}
  void open() {
    weft::waker w;
    {
      std::lock_guard<std::mutex> hold(lock_);
      open_ = true;
      w = waiter_;
    }
    w.wake();
  }
  bool has_waiter() {
    std::lock_guard<std::mutex> hold(lock_);
    return waiter_.valid();
  }

 private:
  std::mutex lock_;
  bool open_ = false;
  weft::waker waiter_;
};

struct door_leaf {
  door* d;
  bool poll_ready(const weft::waker& w) { return d->poll_ready(w); }
  void await_resume() const noexcept {}
};

weft::runtime make() { return weft::runtime::builder().workers(2).build(); }

}  // namespace

int main() {
  bool ok = true;

  {  // 1.
    auto rt = make();
    ok = ok && rt.block_on([]() -> weft::task<int> { co_return 1; }) == 1;
    const auto out = std::move(rt).stop();
    std::printf("1. stop after the work: %s\n", out.is_complete() ? "complete" : "?");
    ok = ok && out.is_complete();
  }
  {  // 2.
    auto rt = make();
    auto d = std::make_shared<door>();
    auto waiting = rt.scheduler().spawn([d]() -> weft::task<void> { co_await door_leaf{d.get()}; });
    while (!d->has_waiter()) std::this_thread::yield();
    const auto out = std::move(rt).stop();
    auto r = waiting.join();
    std::printf("2. stop with a waiting task: incomplete=%d cancelled=%llu, the task says %s\n", out.is_incomplete(),
                static_cast<unsigned long long>(out.counts().tasks_cancelled),
                r ? "done" : weft::to_string(r.error().get_kind()));
    ok = ok && out.is_incomplete() && out.counts().tasks_cancelled == 1 && !r && r.error().is_cancelled();
  }
  {  // 3.
    auto rt = make();
    std::atomic<int> done{0};
    for (int i = 0; i < 4; ++i) {
      (void)rt.scheduler().spawn_anywhere([&done]() -> weft::task<void> {
        co_await weft::sleep(2ms);
        done.fetch_add(1);
      });
    }
    const auto out = std::move(rt).stop_graceful();
    std::printf("3. stop_graceful: %s, %d of 4 finished\n", out.is_complete() ? "complete" : "?", done.load());
    ok = ok && out.is_complete() && done.load() == 4;
  }
  {  // 4.
    auto rt = make();
    auto d = std::make_shared<door>();
    auto waiting = rt.scheduler().spawn([d]() -> weft::task<int> {
      co_await door_leaf{d.get()};
      co_return 7;
    });
    const auto first = rt.drain(5ms);  // a deadline alone never aborts
    d->open();
    const int value = waiting.join().value();
    const auto second = rt.drain();
    const auto out = std::move(rt).stop();
    std::printf("4. drain(5ms): %s; after opening the door the task returned %d; drain: %s; stop: %s\n",
                first == weft::drain_outcome::timed_out ? "timed_out" : "drained", value,
                second == weft::drain_outcome::drained ? "drained" : "timed_out", out.is_complete() ? "complete" : "?");
    ok = ok && first == weft::drain_outcome::timed_out && value == 7 && second == weft::drain_outcome::drained &&
         out.is_complete();
  }
  {  // 5.
    auto rt = make();
    auto asked = rt.scheduler().spawn([]() -> weft::task<bool> {
      weft::builtins::current().operations().request_stop();  // returns at once
      co_return weft::builtins::current().operations().stop_requested();
    });
    ok = ok && asked.join().value();
    const auto out = std::move(rt).stop();
    std::printf("5. request_stop from a worker, then stop: %s\n", out.is_error() ? "error" : "reported");
    ok = ok && !out.is_error();
  }
  {  // 6.
    auto rt = std::make_unique<weft::runtime>(make());
    weft::runtime* raw = rt.get();
    auto inside = rt->scheduler().spawn([raw]() -> weft::task<weft::stop_outcome> { co_return std::move(*raw).stop(); });
    const auto out = inside.join().value();
    std::printf("6. stop from a worker: %s\n", weft::to_string(out).c_str());
    ok = ok && out.is_error() && out.error_reason() == weft::stop_error::called_from_worker;
    // The refusal only requested the stop; the owner's stop() here waits and says what it did.
    const auto owners = std::move(*rt).stop();
    std::printf("   then the owner's stop: %s\n", weft::to_string(owners).c_str());
    ok = ok && owners.is_complete();
  }

  if (!ok) {
    std::fprintf(stderr, "shutdown_variants: wrong result\n");
    return 1;
  }
  return 0;
}
