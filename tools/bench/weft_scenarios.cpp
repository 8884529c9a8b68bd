// weft-bench-scenarios — the whole-runtime scenarios on weft (2 workers unless a scenario
// says otherwise). Prints `scenario=<name> runtime=weft value=<number> unit=<unit>` lines.
// The peers in peers/{tokio,smol,asio} run the same workloads; tools/bench/README.md says what
// each scenario does in each runtime, and which API each one uses.
//
//   weft-bench-scenarios [--scale F] [--scenario NAME|all] [--list]
#include <weft/weft.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_alloc_probe.hpp"
#include "bench_common.hpp"

using namespace std::chrono_literals;

namespace {

constexpr const char* runtime_name = "weft";

// WEFT_BENCH_PIN_WORKERS=1: every runtime pins its workers to CPUs (runtime::builder::pin_workers),
// a weft-only diagnostic run by hand; compare.sh never sets it, so the table compares defaults.
bool pin_workers_asked() {
  const char* v = std::getenv("WEFT_BENCH_PIN_WORKERS");
  return v != nullptr && std::string_view(v) == "1";
}

weft::runtime make_runtime(std::size_t workers) {
  static const bool pin = pin_workers_asked();
  return weft::runtime::builder().workers(workers).pin_workers(pin).build();
}

// A one-slot mailbox: a mutex over {value, stored waker}. The Rust and Asio peers implement the
// same design, so ping_pong compares cross-task wake paths rather than channel implementations.
class mailbox {
 public:
  void send(std::uint64_t v) {
    weft::waker waiting;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (value_) bench::fail("ping_pong", "mailbox holds one message");
      value_ = v;
      waiting = std::move(waiter_);
    }
    std::move(waiting).wake();  // used up, as Rust's Waker::wake(self)
  }

  // Leaf: ready when a message is in the slot.
  class recv_leaf {
   public:
    explicit recv_leaf(mailbox& m) noexcept : m_(m) {}
    bool poll_ready(const weft::waker& w) {
      std::lock_guard<std::mutex> lock(m_.mutex_);
      if (m_.value_) {
        got_ = *m_.value_;
        m_.value_.reset();
        return true;
      }
      if (!m_.waiter_.will_wake(w)) m_.waiter_ = w;
      return false;
    }
    std::uint64_t await_resume() const noexcept { return got_; }

   private:
    mailbox& m_;
    std::uint64_t got_ = 0;
  };
  recv_leaf recv() noexcept { return recv_leaf(*this); }

 private:
  std::mutex mutex_;
  std::optional<std::uint64_t> value_;
  weft::waker waiter_;
};

// ---- spawn_join_1: from a non-worker thread, spawn one trivial task and wait for it ------------
void spawn_join_1(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::size_t n = a.count(20'000);
  std::vector<double> samples;
  samples.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto t0 = bench::wall::now();
    auto h = rt.scheduler().spawn_anywhere([i]() -> weft::task<std::size_t> { co_return i; });
    auto r = h.join();
    samples.push_back(bench::ns_since(t0));
    if (!r || *r != i) bench::fail("spawn_join_1", "wrong result");
  }
  bench::report("spawn_join_1", runtime_name, bench::median(samples), "ns");
}

// ---- spawn_join_1024: inside a task, spawn 1,024 trivial tasks and await all -------------------
void spawn_join_1024(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::size_t batches = a.count(200);
  std::vector<double> samples = rt.block_on([batches]() -> weft::task<std::vector<double>> {
    std::vector<double> samples;
    samples.reserve(batches);
    weft::scheduler& here = weft::builtins::current().scheduler();  // spawn() lands on this worker
    for (std::size_t b = 0; b < batches; ++b) {
      const auto t0 = bench::wall::now();
      std::vector<weft::join_handle<std::uint64_t>> handles;
      handles.reserve(1024);
      for (std::uint64_t i = 0; i < 1024; ++i) {
        handles.push_back(here.spawn([i]() -> weft::task<std::uint64_t> { co_return i; }));
      }
      std::uint64_t sum = 0;
      for (auto& h : handles) sum += (co_await h).value();
      samples.push_back(bench::ns_since(t0) / 1e3);
      if (sum != 1023 * 1024 / 2) bench::fail("spawn_join_1024", "wrong sum");
    }
    co_return samples;
  });
  bench::report("spawn_join_1024", runtime_name, bench::median(samples), "us");
}

// ---- yield_storm: 10,000 tasks each yielding 8 times, spawned from inside the runtime ----------
void yield_storm(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::size_t reps = a.count(20);
  const std::size_t tasks = a.count(10'000);
  std::vector<double> samples = rt.block_on([reps, tasks]() -> weft::task<std::vector<double>> {
    std::vector<double> samples;
    weft::scheduler& sched = weft::builtins::current().scheduler();
    for (std::size_t r = 0; r < reps; ++r) {
      const auto t0 = bench::wall::now();
      std::vector<weft::join_handle<void>> handles;
      handles.reserve(tasks);
      for (std::size_t i = 0; i < tasks; ++i) {
        handles.push_back(sched.spawn_anywhere([]() -> weft::task<void> {
          for (int y = 0; y < 8; ++y) co_await weft::yield_now();
        }));
      }
      for (auto& h : handles) {
        if (!(co_await h)) bench::fail("yield_storm", "task failed");
      }
      samples.push_back(bench::ns_since(t0) / 1e6);
    }
    co_return samples;
  });
  bench::report("yield_storm", runtime_name, bench::median(samples), "ms");
}

// ---- ping_pong: two tasks on different workers exchange a message ------------------------------
// `workers` 2: the tasks on workers 0 and 1 (ping_pong); 1: both on the one worker (ping_pong_local).
double ping_pong_ns(const bench::args& a, std::size_t workers = 2) {
  auto rt = make_runtime(workers);
  const std::uint64_t n = a.count(100'000);
  mailbox to_b, to_a;
  const auto t0 = bench::wall::now();
  auto b = rt.worker_scheduler(workers - 1).spawn([&]() -> weft::task<void> {
    for (std::uint64_t i = 0; i < n; ++i) to_a.send(co_await to_b.recv());
  });
  auto a_task = rt.worker_scheduler(0).spawn([&]() -> weft::task<bool> {
    bool ok = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      to_b.send(i);
      ok = ok && (co_await to_a.recv()) == i;
    }
    co_return ok;
  });
  auto ra = a_task.join();
  auto rb = b.join();
  const double ns = bench::ns_since(t0);
  if (!ra || !*ra || !rb) bench::fail("ping_pong", "wrong exchange");
  return ns / static_cast<double>(n);
}
void ping_pong(const bench::args& a) { bench::report("ping_pong", runtime_name, ping_pong_ns(a), "ns"); }

// ping_pong_pinned: the figure the peers that cannot pin a task (tokio, async-executor) measure
// with one single-threaded executor per task, so that every message crosses threads. weft's
// ping_pong already places each task on its own worker: the same exchange, run again.
void ping_pong_pinned(const bench::args& a) {
  bench::report("ping_pong_pinned", runtime_name, ping_pong_ns(a), "ns");
}

// ping_pong_local: the same timed exchange with no message crossing threads, in every runtime: one
// worker runs both tasks (the placement tokio's scheduler reaches by itself in ping_pong).
void ping_pong_local(const bench::args& a) {
  bench::report("ping_pong_local", runtime_name, ping_pong_ns(a, 1), "ns");
}

// ping_pong_cross: the share of messages received on another thread than the one that sent them,
// from a second, untimed exchange of tagged messages (the same placement as above).
void ping_pong_cross(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::uint64_t n = a.count(20'000);
  mailbox to_b, to_a;
  auto b = rt.worker_scheduler(1).spawn([&]() -> weft::task<std::uint64_t> {
    std::uint64_t crossed = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t m = co_await to_b.recv();
      crossed += bench::message_crossed(m) ? 1 : 0;
      to_a.send(bench::tagged_message(bench::message_seq(m)));
    }
    co_return crossed;
  });
  auto a_task = rt.worker_scheduler(0).spawn([&]() -> weft::task<std::uint64_t> {
    std::uint64_t crossed = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      to_b.send(bench::tagged_message(i));
      const std::uint64_t m = co_await to_a.recv();
      if (bench::message_seq(m) != i) bench::fail("ping_pong", "wrong exchange");
      crossed += bench::message_crossed(m) ? 1 : 0;
    }
    co_return crossed;
  });
  auto ra = a_task.join();
  auto rb = b.join();
  if (!ra || !rb) bench::fail("ping_pong", "wrong exchange");
  bench::report("ping_pong_cross", runtime_name, static_cast<double>(*ra + *rb) / static_cast<double>(2 * n), "share");
}

// ping_pong_floor: the machine's own cross-core round trip, no runtime (bench_common.hpp).
void ping_pong_floor(const bench::args& a) {
  bench::report("ping_pong_floor", "machine", bench::cross_core_round_trip_ns(a.count(1'000'000)), "ns");
}

// ---- timers_100k: 100,000 concurrent tasks each sleeping 1 ms ----------------------------------
void timers_100k(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::size_t n = a.count(100'000);
  const double ms = rt.block_on([n]() -> weft::task<double> {
    weft::scheduler& sched = weft::builtins::current().scheduler();
    const auto t0 = bench::wall::now();
    std::vector<weft::join_handle<void>> handles;
    handles.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      handles.push_back(sched.spawn_anywhere([]() -> weft::task<void> { co_await weft::sleep(1ms); }));
    }
    for (auto& h : handles) {
      if (!(co_await h)) bench::fail("timers_100k", "task failed");
    }
    co_return bench::ns_since(t0) / 1e6;
  });
  bench::report("timers_100k", runtime_name, ms, "ms");
}

// ---- cpu_scaling: 2,000 kernel tasks with 1 and with 2 workers ---------------------------------
double cpu_tasks_per_s(std::size_t workers, std::size_t n) {
  auto rt = make_runtime(workers);
  return rt.block_on([n]() -> weft::task<double> {
    weft::scheduler& sched = weft::builtins::current().scheduler();
    const auto t0 = bench::wall::now();
    std::vector<weft::join_handle<std::uint64_t>> handles;
    handles.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      handles.push_back(sched.spawn_anywhere([i]() -> weft::task<std::uint64_t> { co_return bench::kernel(i); }));
    }
    std::uint64_t acc = 0;
    for (auto& h : handles) acc ^= (co_await h).value();
    const double s = bench::ns_since(t0) / 1e9;
    if (acc == 1) bench::fail("cpu_scaling", "impossible");  // keeps the results alive
    co_return static_cast<double>(n) / s;
  });
}

void cpu_scaling(const bench::args& a) {
  const std::size_t n = a.count(2'000);
  const double one = cpu_tasks_per_s(1, n);
  const double two = cpu_tasks_per_s(2, n);
  bench::report("cpu_1w", runtime_name, one, "tasks/s");
  bench::report("cpu_2w", runtime_name, two, "tasks/s");
  bench::report("cpu_speedup", runtime_name, two / one, "x");
  // The same kernels on plain threads, no runtime: the speedup this machine itself allows.
  const double bare_one = bench::bare_kernel_tasks_per_s(1, n);
  const double bare_two = bench::bare_kernel_tasks_per_s(2, n);
  bench::report("cpu_speedup_bare", "machine", bare_two / bare_one, "x");
}

// ---- task_memory: resident bytes per idle task, 1,000,000 tasks parked on a never-ready leaf ---
struct never_ready {
  bool poll_ready(const weft::waker&) { return false; }
  void await_resume() {}
};

std::atomic<std::size_t> parked{0};

weft::task<void> parked_task() {
  parked.fetch_add(1, std::memory_order_relaxed);  // a counter only; nothing is published
  co_await never_ready{};
}

[[noreturn]] void task_memory(const bench::args& a) {
  auto rt = make_runtime(2);
  const std::size_t n = a.count(1'000'000);
  rt.block_on([]() -> weft::task<void> { co_return; });  // workers started and warm
  const std::uint64_t before = bench::rss_bytes();
  rt.block_on([n]() -> weft::task<void> {
    weft::scheduler& here = weft::builtins::current().scheduler();
    for (std::size_t i = 0; i < n; ++i) here.spawn([] { return parked_task(); }).detach();
    co_return;
  });
  while (parked.load(std::memory_order_relaxed) < n) std::this_thread::sleep_for(1ms);
  const std::uint64_t after = bench::rss_bytes();
  const double per_task = static_cast<double>(after > before ? after - before : 0) / static_cast<double>(n);
  // The frame of the user's coroutine alone: the size operator new was asked for when calling it.
  double frame = 0;
  {
    weft::task<void> probe = parked_task();
    frame = static_cast<double>(bench::last_allocation_bytes);
  }
  // The target's measure: resident memory per idle task minus the coroutine frame, the frame reported separately
  // (and the whole resident growth per task too).
  bench::report("task_memory", runtime_name, per_task - frame, "bytes");
  bench::report("task_memory_frame", runtime_name, frame, "bytes");
  bench::report("task_memory_rss", runtime_name, per_task, "bytes");
  bench::quick_exit_ok();
}

}  // namespace

int main(int argc, char** argv) {
  const bench::args a = bench::parse_args(argc, argv);
  if (a.wants("spawn_join_1")) spawn_join_1(a);
  if (a.wants("spawn_join_1024")) spawn_join_1024(a);
  if (a.wants("yield_storm")) yield_storm(a);
  if (a.wants("ping_pong")) {
    ping_pong(a);
    ping_pong_cross(a);
    ping_pong_pinned(a);
    ping_pong_local(a);
    ping_pong_floor(a);
  }
  if (a.wants("timers_100k")) timers_100k(a);
  if (a.wants("cpu_scaling")) cpu_scaling(a);
  if (a.wants("task_memory")) task_memory(a);
  return 0;
}
