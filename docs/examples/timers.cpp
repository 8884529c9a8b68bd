// docs/examples/timers.cpp — sleep, timeout and interval inside tasks; set_timeout and
// set_interval callbacks on the loop.
//
// Every check here is one that holds however late the machine runs: a timer never fires before
// its deadline, a timed-out task is aborted, and an interval keeps its schedule (late ticks catch
// up at once instead of shifting the rest). Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <cstdio>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

weft::instant now() { return weft::platform::clock::now(); }  // the seam's clock

long long ms_since(weft::instant start) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(now() - start).count());
}

bool failed = false;
void check(bool condition, const char* what) {
  std::printf("  [%s] %s\n", condition ? "ok" : "FAILED", what);
  if (!condition) failed = true;
}

// Sets *finished when it completes, *dropped when its frame is destroyed (completed or not).
weft::task<int> slow_work(std::chrono::milliseconds cost, bool* finished, bool* dropped) {
  struct on_drop {
    bool* flag;
    ~on_drop() { *flag = true; }
  } guard{dropped};
  co_await weft::sleep(cost);
  *finished = true;
  co_return static_cast<int>(cost.count());
}

weft::task<void> sleeping() {
  std::printf("sleep:\n");
  const weft::instant start = now();
  co_await weft::sleep(20ms);
  check(now() - start >= 20ms, "sleep(20ms) lasted at least 20 ms");
  const weft::instant target = now() + 5ms;
  co_await weft::sleep_until(target);
  check(now() >= target, "sleep_until(t) resumed at or after t");
}

weft::task<void> timeouts() {
  std::printf("timeout:\n");
  // A task given to timeout runs as its own task on this loop; when time runs out it is aborted.
  bool finished = false;
  bool dropped = false;
  const weft::instant start = now();
  weft::expected<int, weft::timeout_error> late =
      co_await weft::timeout(10ms, slow_work(1s, &finished, &dropped));
  check(!late && late.error() == weft::timeout_error::elapsed, "a 1 s task under a 10 ms timeout: elapsed");
  check(now() - start >= 10ms && now() - start < 1s, "the timeout ended the wait, not the task");
  co_await weft::yield_now();  // the abort destroys the frame at the task's next poll, a microtask
  check(dropped && !finished, "the timed-out task was aborted (frame destroyed, never finished)");

  finished = dropped = false;
  weft::expected<int, weft::timeout_error> early =
      co_await weft::timeout(1s, slow_work(5ms, &finished, &dropped));
  check(early && *early == 5 && finished, "a 5 ms task under a 1 s timeout: its value");

  // Any leaf can be bounded too, here a sleep.
  weft::expected<void, weft::timeout_error> nap = co_await weft::timeout(5ms, weft::sleep(1s));
  check(!nap, "sleep(1s) under a 5 ms timeout: elapsed");
}

weft::task<void> ticking() {
  std::printf("interval:\n");
  constexpr auto period = 10ms;
  const weft::instant start = now();  // read before the interval fixes its schedule
  weft::interval every(period);       // the first tick is immediate, then one per period
  std::vector<long long> at;
  bool never_early = true;
  for (int k = 0; k < 6; ++k) {
    co_await every.tick();
    never_early = never_early && now() - start >= k * period;
    at.push_back(ms_since(start));
    if (k == 1) std::this_thread::sleep_for(35ms);  // a stall: ticks 2 and 3 become overdue
  }
  std::printf("  ticks at ms:");
  for (long long t : at) std::printf(" %lld", t);
  std::printf("\n");
  check(never_early, "tick k never before k periods");
  // The stall did not shift the schedule: tick 5 is due at 50 ms, not 35 ms later than that.
  check(at[2] == at[3] || at[3] - at[2] < 10, "overdue ticks completed back to back");
}

}  // namespace

int main() {
  weft::event_loop loop;
  loop.block_on(sleeping());
  loop.block_on(timeouts());
  loop.block_on(ticking());

  std::printf("set_timeout / set_interval:\n");
  int ticks = 0;
  const weft::timer_id every_5ms = loop.set_interval(5ms, [&] { ++ticks; });
  bool cleared = false;
  const weft::instant start = now();
  weft::instant fired_at{};
  loop.set_timeout(23ms, [&] {
    fired_at = now();
    cleared = loop.clear_timer(every_5ms);  // the interval stops; run() can now return
  });
  loop.run();
  std::printf("  interval ticked %d time(s) before the 23 ms timeout cleared it\n", ticks);
  check(fired_at - start >= 23ms, "set_timeout(23ms) fired no earlier than 23 ms");
  check(cleared, "clear_timer stopped the interval");
  // Ticks due at 5, 10, 15 and 20 ms; a late loop may find several of them and the timeout due in
  // one turn, and the interval's next tick is only re-armed when its callback runs.
  check(ticks >= 1 && ticks <= 4, "between one and four ticks");

  if (failed) {
    std::fprintf(stderr, "timers: wrong result\n");
    return 1;
  }
  return 0;
}
