// docs/examples/wakers.cpp — a hand-written leaf awaitable, and what wakes may and may not do.
//
// `gate` is a leaf: it reports readiness and keeps the waker of the task waiting on it. A plain
// thread opens it. On the way the thread sends a spurious wake (before opening) and duplicate
// wakes (after): each costs at most one poll of the leaf, never an early resume. Then a waker
// clone outlives its loop, and calling it afterwards does nothing. Exits non-zero on a wrong
// result.
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

using namespace std::chrono_literals;

namespace {

// Opened once, from any thread. The task awaiting it is woken when it opens.
class gate {
 public:
  // The leaf protocol: called on the task's loop thread, at the co_await and at each later poll.
  bool poll_ready(const weft::waker& w) {
    polls_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> hold(lock_);
    if (open_) return true;
    if (!waiter_.will_wake(w)) waiter_ = w;  // keep a clone; replace it only if it changed
    return false;
  }
  void await_resume() const noexcept {}

  // Any thread.
  void open() {
    weft::waker w;
    {
      std::lock_guard<std::mutex> hold(lock_);
      open_ = true;
      w = waiter_;
    }
    w.wake();  // outside the lock: a wake only queues a poll, but keep locks short anyway
  }
  void poke() {  // a wake with nothing to report: spurious
    weft::waker w;
    {
      std::lock_guard<std::mutex> hold(lock_);
      w = waiter_;
    }
    w.wake();
  }
  int polls() const { return polls_.load(std::memory_order_relaxed); }

 private:
  std::mutex lock_;
  bool open_ = false;
  weft::waker waiter_;
  std::atomic<int> polls_{0};
};

}  // namespace

int main() {
  bool ok = true;
  std::optional<weft::waker> survivor;  // a clone that will outlive the loop

  {
    weft::event_loop loop;
    gate g;
    bool resumed = false;

    auto waiter = loop.spawn([&]() -> weft::task<void> {
      survivor = co_await weft::current_waker();
      co_await g;      // suspends: the gate is shut
      resumed = true;  // reached only once the gate reports ready
    });

    // The task is suspended on the gate; nothing else is queued or armed, so run() returns.
    // A waker held by another party never keeps a loop running.
    loop.run();
    std::printf("after the first run(): resumed=%d, leaf polled %d time(s)\n", resumed, g.polls());
    ok = ok && !resumed && !waiter.is_finished();

    std::thread opener([&g] {
      g.poke();  // spurious: the task is polled, the gate says "not ready", it stays suspended
      std::this_thread::sleep_for(5ms);
      g.open();
      g.poke();  // late duplicates: coalesced with the pending poll, or a no-op once finished
      g.poke();
    });
    // Wakes from another thread go through the loop's inbox: block_on on the join handle drives
    // the loop until the waiter has finished.
    weft::expected<void, weft::join_error> joined =
        loop.block_on([&]() -> weft::task<weft::expected<void, weft::join_error>> { co_return co_await waiter; }());
    opener.join();
    loop.run();  // let any late wake's poll drain
    std::printf("after opening: resumed=%d, leaf polled %d time(s)\n", resumed, g.polls());
    ok = ok && resumed && joined.has_value() && g.polls() >= 2;
  }

  // The loop is gone. The clone still holds its task cell alive (not the loop); waking it is a
  // no-op because the task completed.
  survivor->wake();
  survivor->wake();
  survivor.reset();
  std::printf("woke a waker that outlived its loop: nothing happened\n");

  if (!ok) {
    std::fprintf(stderr, "wakers: wrong result\n");
    return 1;
  }
  return 0;
}
