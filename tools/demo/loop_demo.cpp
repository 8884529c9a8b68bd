// tools/demo/loop_demo.cpp — weft-demo: one event loop doing real work for several threads.
//
// A small pipeline. Producer threads (loop threads from spawn_loop_thread, each with its own loop) send work
// items to the main loop as macrotasks through its thread_handle, in bursts, backing off when the
// bounded inbox answers `full`. For every item the main loop spawns a task that processes it
// under a timeout: most items take a few milliseconds, every tenth is too slow and times out,
// every fiftieth throws (a panic, which reaches the awaiting task as an exception). A
// set_interval callback prints progress; the summary at the end is checked against counts
// computed independently, and the program exits non-zero on any mismatch.
//
// Usage: weft-demo [--producers N] [--items N-per-producer]; a bad flag is refused with exit
// status 2 (tools/tool_flags.hpp).
#include <weft/weft.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "../tool_flags.hpp"

using namespace std::chrono_literals;

namespace {

struct work_item {
  int producer = 0;
  int seq = 0;
};

enum class item_kind { normal, slow, failing };

item_kind kind_of(const work_item& item) {
  if (item.seq % 50 == 49) return item_kind::failing;
  if (item.seq % 10 == 9) return item_kind::slow;
  return item_kind::normal;
}

constexpr auto budget = 50ms;        // each item's timeout
constexpr auto slow_cost = 150ms;    // well over the budget
constexpr int burst = 25;            // items a producer sends back to back
constexpr auto pause = 50ms;         // between bursts

// Each producer is a thread with its own loop; more than this is a typo rather than a demo.
constexpr int max_producers = 64;
// Keeps producers * items, the int counts of the summary, far from overflowing.
constexpr int max_items = 1'000'000;

std::uint64_t checksum_of(const work_item& item) {
  return static_cast<std::uint64_t>(item.producer) * 1'000'003u + static_cast<std::uint64_t>(item.seq);
}

// Counts what the runtime reports to telemetry (called from any thread).
class counting_sink final : public weft::telemetry_sink {
 public:
  void record(const weft::telemetry_event& event) noexcept override {
    counts_[static_cast<int>(event.kind)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t count(weft::telemetry_kind kind) const {
    return counts_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t> counts_[8]{};
};

// Everything the main loop's thread knows about the run (touched by that thread only).
struct pipeline {
  weft::event_loop* loop = nullptr;
  int producers = 0;
  int items_per_producer = 0;
  int received = 0;
  int in_flight = 0;
  int ok = 0;
  int timed_out = 0;
  int failed = 0;
  int producers_done = 0;
  std::uint64_t checksum = 0;
  weft::timer_id progress{};
  weft::instant start{};

  int total() const { return producers * items_per_producer; }

  void report(const char* label) const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(weft::platform::clock::now() - start);
    std::printf("[%6.2f s] %-9s received %5d/%d  in flight %4d  ok %5d  timed out %4d  failed %3d\n",
                static_cast<double>(ms.count()) / 1000.0, label, received, total(), in_flight, ok,
                timed_out, failed);
  }

  // Called after every change that could be the last one.
  void maybe_finish() {
    if (producers_done == producers && received == total() && in_flight == 0 && progress.value != 0) {
      loop->clear_timer(progress);  // the last armed timer: run() may now return
      progress = {};
      report("done");
    }
  }
};

std::atomic<int> full_answers{0};

// The work itself: takes a while, sometimes too long, sometimes fails.
weft::task<std::uint64_t> process(work_item item) {
  switch (kind_of(item)) {
    case item_kind::slow:
      co_await weft::sleep(slow_cost);
      break;
    case item_kind::failing:
      co_await weft::sleep(1ms);
      throw std::runtime_error("item " + std::to_string(item.seq) + " is malformed");
    case item_kind::normal:
      co_await weft::sleep(std::chrono::milliseconds(1 + item.seq % 5));
      break;
  }
  co_return checksum_of(item);
}

// One item's life on the main loop: process it as its own task, bounded by `budget`.
weft::task<void> handle(pipeline& p, work_item item) {
  try {
    weft::expected<std::uint64_t, weft::timeout_error> r = co_await weft::timeout(budget, process(item));
    if (r) {
      ++p.ok;
      p.checksum += *r;
    } else {
      ++p.timed_out;  // process() was aborted
    }
  } catch (const std::runtime_error&) {
    ++p.failed;  // what process() threw, rethrown at the co_await
  }
  --p.in_flight;
  p.maybe_finish();
}

// Sends `fn` to `target`, backing off while the inbox is full. False if the target closed.
template <class F>
weft::task<bool> send(weft::thread_handle& target, F fn) {
  for (;;) {
    weft::submit_result sent = target.queue_macrotask(fn);
    if (sent) co_return true;
    if (sent.error() == weft::queue_error::closed) co_return false;
    full_answers.fetch_add(1, std::memory_order_relaxed);
    co_await weft::sleep(200us);
  }
}

// A producer, on its own thread and loop.
weft::task<void> produce(weft::thread_handle target, pipeline* p, int producer, int count) {
  for (int seq = 0; seq < count; ++seq) {
    const work_item item{producer, seq};
    // Runs on the main loop's thread: counts the item and spawns its handler there.
    const bool accepted = co_await send(target, [p, item] {
      ++p->received;
      ++p->in_flight;
      p->loop->spawn(handle(*p, item)).detach();
    });
    if (!accepted) co_return;
    if ((seq + 1) % burst == 0) co_await weft::sleep(pause);
  }
  (void)co_await send(target, [p] {
    ++p->producers_done;
    p->maybe_finish();
  });
}

}  // namespace

int main(int argc, char** argv) {
  int producers = 4;
  int items = 250;
  try {
    tool_flags::reader r(argc, argv, "--producers N, --items N");
    while (r.next()) {
      if (r.is("--producers")) {
        producers = tool_flags::parse_integer(r.flag(), r.value(), 1, max_producers);
      } else if (r.is("--items")) {
        items = tool_flags::parse_integer(r.flag(), r.value(), 1, max_items);
      } else {
        r.unknown();
      }
    }
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error("weft-demo", e);
  }

  auto sink = std::make_shared<counting_sink>();
  weft::event_loop::options opts;
  opts.inbox_capacity = 64;  // small, so bursts from several producers can meet `full`
  opts.telemetry = sink;
  weft::event_loop loop(opts);

  pipeline p;
  p.loop = &loop;
  p.producers = producers;
  p.items_per_producer = items;
  p.start = weft::platform::clock::now();

  std::printf("weft-demo: %d producer threads send %d items each to one event loop (inbox of %zu);\n"
              "each item is processed by its own task under a %lld ms timeout.\n",
              producers, items, loop.handle().inbox_capacity(), static_cast<long long>(budget.count()));

  p.progress = loop.set_interval(100ms, [&p] { p.report("progress"); });
  for (int id = 0; id < producers; ++id) {
    loop.spawn_loop_thread([target = loop.handle(), pp = &p, id, items](weft::event_loop& own) {
      own.spawn(produce(target, pp, id, items)).detach();
    });
  }
  loop.run();  // until every producer thread ended, every item is handled and the ticker cleared

  // The same counts, computed without the runtime.
  int want_ok = 0;
  int want_slow = 0;
  int want_failed = 0;
  std::uint64_t want_checksum = 0;
  for (int id = 0; id < producers; ++id) {
    for (int seq = 0; seq < items; ++seq) {
      const work_item item{id, seq};
      switch (kind_of(item)) {
        case item_kind::normal:
          ++want_ok;
          want_checksum += checksum_of(item);
          break;
        case item_kind::slow: ++want_slow; break;
        case item_kind::failing: ++want_failed; break;
      }
    }
  }

  const auto elapsed = weft::platform::clock::now() - p.start;
  std::printf("\nsummary after %.2f s\n",
              static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()) / 1000.0);
  std::printf("  items received      %6d  (expected %d)\n", p.received, p.total());
  std::printf("  processed in time   %6d  (expected %d)\n", p.ok, want_ok);
  std::printf("  timed out           %6d  (expected %d)\n", p.timed_out, want_slow);
  std::printf("  failed (threw)      %6d  (expected %d)\n", p.failed, want_failed);
  std::printf("  checksum            %s\n", p.checksum == want_checksum ? "matches" : "DIFFERS");
  std::printf("  `full` answers      %6d  (producers backed off and retried)\n", full_answers.load());
  std::printf("  telemetry           inbox_overflow %llu, callback_panicked %llu\n",
              static_cast<unsigned long long>(sink->count(weft::telemetry_kind::inbox_overflow)),
              static_cast<unsigned long long>(sink->count(weft::telemetry_kind::callback_panicked)));

  const bool ok = p.received == p.total() && p.ok == want_ok && p.timed_out == want_slow &&
                  p.failed == want_failed && p.checksum == want_checksum && p.in_flight == 0 &&
                  p.producers_done == producers && loop.live_tasks() == 0 &&
                  sink->count(weft::telemetry_kind::callback_panicked) == 0 &&
                  sink->count(weft::telemetry_kind::inbox_overflow) <= 1;
  std::printf("%s\n", ok ? "weft-demo: all counts check out" : "weft-demo: MISMATCH");
  return ok ? 0 : 1;
}
