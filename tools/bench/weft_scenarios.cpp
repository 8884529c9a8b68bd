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
#include <string>
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

// ---- timeout_churn: 1,000,000 sequential timeouts of an hour around an operation ready at once -----
// On one loop (the main thread's); total ms. The operation is a leaf ready at its first poll, so
// each timeout is made and dropped without its timer ever being due: the cost of the combinator.
struct ready_now {
  bool poll_ready(const weft::waker&) const noexcept { return true; }
  std::size_t await_resume() const noexcept { return 1; }
};

void timeout_churn(const bench::args& a) {
  weft::event_loop loop;
  const std::size_t n = a.count(1'000'000);
  const double ms = loop.block_on([](std::size_t count) -> weft::task<double> {
    const auto t0 = bench::wall::now();
    std::size_t done = 0;
    for (std::size_t i = 0; i < count; ++i) {
      auto r = co_await weft::timeout(1h, ready_now{});
      if (r) done += *r;
    }
    if (done != count) bench::fail("timeout_churn", "a ready operation timed out");
    co_return bench::ns_since(t0) / 1e6;
  }(n));
  bench::report("timeout_churn", runtime_name, ms, "ms");
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


// ---- the work-stealing pool's scenarios (weft::stealing_pool, 2 workers) -----------------------
// Each has a tokio (multi-thread runtime) and an async-executor twin in peers/; Asio has none.

constexpr std::size_t pool_workers = 2;

weft::stealing_pool make_pool(std::size_t workers) { return weft::stealing_pool::builder().workers(workers).build(); }

// pool_spawn_join_1024: from the main thread (outside the pool), spawn 1,024 trivial tasks, then
// join them all; 200 batches; median us per batch.
void pool_spawn_join_1024(const bench::args& a) {
  auto pool = make_pool(pool_workers);
  const std::size_t batches = a.count(200);
  std::vector<double> samples;
  samples.reserve(batches);
  std::vector<weft::join_handle<std::uint64_t>> handles;
  handles.reserve(1024);
  for (std::size_t b = 0; b < batches; ++b) {
    const auto t0 = bench::wall::now();
    for (std::uint64_t i = 0; i < 1024; ++i) {
      handles.push_back(pool.spawn([i]() -> weft::task<std::uint64_t> { co_return i; }));
    }
    std::uint64_t sum = 0;
    for (auto& h : handles) sum += h.join().value();
    samples.push_back(bench::ns_since(t0) / 1e3);
    handles.clear();
    if (sum != 1023 * 1024 / 2) bench::fail("pool_spawn_join_1024", "wrong sum");
  }
  bench::report("pool_spawn_join_1024", runtime_name, bench::median(samples), "us");
}

// pool_yield_storm: yield_storm's shape on the pool: a root pool task spawns 10,000 tasks × 8
// yields onto the pool and awaits all; 20 reps; median ms.
void pool_yield_storm(const bench::args& a) {
  auto pool = make_pool(pool_workers);
  const std::size_t reps = a.count(20);
  const std::size_t tasks = a.count(10'000);
  std::vector<double> samples = pool.block_on([](weft::stealing_pool* p, std::size_t reps,
                                                 std::size_t tasks) -> weft::task<std::vector<double>> {
    std::vector<double> samples;
    for (std::size_t r = 0; r < reps; ++r) {
      const auto t0 = bench::wall::now();
      std::vector<weft::join_handle<void>> handles;
      handles.reserve(tasks);
      for (std::size_t i = 0; i < tasks; ++i) {
        handles.push_back(p->spawn([]() -> weft::task<void> {
          for (int y = 0; y < 8; ++y) co_await weft::yield_now();
        }));
      }
      for (auto& h : handles) {
        if (!(co_await h)) bench::fail("pool_yield_storm", "task failed");
      }
      samples.push_back(bench::ns_since(t0) / 1e6);
    }
    co_return samples;
  }(&pool, reps, tasks));
  bench::report("pool_yield_storm", runtime_name, bench::median(samples), "ms");
}

// A binary tree of pool tasks `depth` levels below this one: each node spawns its two children
// onto the pool and awaits them; returns the number of nodes.
weft::task<std::uint64_t> pool_tree(weft::stealing_pool* pool, unsigned depth) {
  if (depth == 0) co_return 1;
  auto left = pool->spawn([pool, depth] { return pool_tree(pool, depth - 1); });
  auto right = pool->spawn([pool, depth] { return pool_tree(pool, depth - 1); });
  const std::uint64_t l = (co_await left).value();
  const std::uint64_t r = (co_await right).value();
  co_return l + r + 1;
}

// The depth of the largest full binary tree of at most `tasks` nodes (at least one node).
unsigned tree_depth_for(std::size_t tasks) {
  unsigned depth = 0;
  while ((std::uint64_t{2} << (depth + 1)) - 1 <= tasks) ++depth;
  return depth;
}

// pool_nested_spawn: a binary tree of 2^16 - 1 tasks (65,536 scaled, rounded down to a full
// tree), its root spawned from outside; 20 trees; median ms per tree.
void pool_nested_spawn(const bench::args& a) {
  auto pool = make_pool(pool_workers);
  const std::size_t reps = a.count(20);
  const unsigned depth = tree_depth_for(a.count(65'536));
  std::vector<double> samples;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto t0 = bench::wall::now();
    const std::uint64_t nodes = pool.block_on(pool_tree(&pool, depth));
    samples.push_back(bench::ns_since(t0) / 1e6);
    if (nodes != (std::uint64_t{2} << depth) - 1) bench::fail("pool_nested_spawn", "wrong node count");
  }
  bench::report("pool_nested_spawn", runtime_name, bench::median(samples), "ms");
}

// steal_imbalance's run: one parent pool task spawns `n` ~20 us kernels onto the pool (its own
// worker's queue) and awaits them; the other workers only get work by stealing. Seconds.
double imbalance_s(std::size_t workers, std::size_t n) {
  auto pool = make_pool(workers);
  return pool.block_on([](weft::stealing_pool* p, std::size_t n) -> weft::task<double> {
    const auto t0 = bench::wall::now();
    std::vector<weft::join_handle<std::uint64_t>> handles;
    handles.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      handles.push_back(
          p->spawn([i]() -> weft::task<std::uint64_t> { co_return bench::kernel(i, bench::short_kernel_iterations); }));
    }
    std::uint64_t acc = 0;
    for (auto& h : handles) acc ^= (co_await h).value();
    const double s = bench::ns_since(t0) / 1e9;
    if (acc == 1) bench::fail("steal_imbalance", "impossible");  // keeps the results alive
    co_return s;
  }(&pool, n));
}

// steal_imbalance: 4,000 kernels from one parent, with 1 and with 2 workers, 5 runs each
// (interleaved); the speedup of the medians, time(1 worker) / time(2 workers).
void steal_imbalance(const bench::args& a) {
  const std::size_t n = a.count(4'000);
  const std::size_t reps = a.count(5);
  std::vector<double> one, two;
  for (std::size_t r = 0; r < reps; ++r) {
    one.push_back(imbalance_s(1, n));
    two.push_back(imbalance_s(2, n));
  }
  bench::report("steal_imbalance", runtime_name, bench::median(one) / bench::median(two), "x");
}

// external_producers: 1, 2, 4 and 8 threads outside the pool each spawn 20,000 trivial tasks and
// then join them; tasks/s over all producers, from their common start to the last join.
constexpr std::size_t producer_counts[] = {1, 2, 4, 8};

void external_producers(const bench::args& a) {
  const std::size_t per_producer = a.count(20'000);
  for (const std::size_t producers : producer_counts) {
    auto pool = make_pool(pool_workers);
    std::atomic<bool> go{false};
    std::atomic<std::size_t> wrong{0};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < producers; ++t) {
      threads.emplace_back([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();  // pairs with the release store of `go`
        std::vector<weft::join_handle<std::uint64_t>> handles;
        handles.reserve(per_producer);
        for (std::uint64_t i = 0; i < per_producer; ++i) {
          handles.push_back(pool.spawn([i]() -> weft::task<std::uint64_t> { co_return i; }));
        }
        std::uint64_t i = 0;
        for (auto& h : handles) {
          if (h.join().value() != i++) wrong.fetch_add(1, std::memory_order_relaxed);  // a count, read after the joins
        }
      });
    }
    const auto t0 = bench::wall::now();
    go.store(true, std::memory_order_release);  // pairs with the producers' acquire loads
    for (auto& t : threads) t.join();
    const double s = bench::ns_since(t0) / 1e9;
    if (wrong.load(std::memory_order_relaxed) != 0) bench::fail("external_producers", "wrong result");
    const std::string figure = "external_producers_" + std::to_string(producers);
    bench::report(figure.c_str(), runtime_name, static_cast<double>(producers * per_producer) / s, "tasks/s");
  }
}

// priority_latency: both workers busy with background CPU work (64 background tasks each running
// ~20 us kernels with a yield after each), the main thread submits a probe every 200 us, high and
// background in turn; each probe records the time from just before its spawn to its first poll.
// p50 and p99 per priority (us), and high p99 / background p99.
constexpr std::size_t saturation_chains = 64;
constexpr auto probe_interval = 200us;

struct saturation {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> kernels{0};
  std::atomic<std::size_t> live_chains{0};
};

weft::task<void> background_chain(saturation* sat, std::uint64_t seed) {
  for (;;) {
    if (bench::kernel(seed++, bench::short_kernel_iterations) == 1) bench::fail("priority_latency", "impossible");
    sat->kernels.fetch_add(1, std::memory_order_relaxed);  // a progress count only
    if (sat->stop.load(std::memory_order_acquire)) {       // pairs with the release store that ends the run
      sat->live_chains.fetch_sub(1, std::memory_order_release);  // pairs with the main thread's acquire load
      co_return;
    }
    co_await weft::yield_now();
  }
}

void priority_latency(const bench::args& a) {
  auto pool = make_pool(pool_workers);
  const std::size_t probes = 2 * a.count(1'000);  // half high, half background
  saturation sat;
  sat.live_chains.store(saturation_chains, std::memory_order_relaxed);  // before any chain starts
  for (std::size_t c = 0; c < saturation_chains; ++c) {
    pool.spawn(weft::priority::background, [&sat, c] { return background_chain(&sat, c << 32); }).detach();
  }
  // Saturated once every chain has run a kernel.
  while (sat.kernels.load(std::memory_order_relaxed) < saturation_chains) std::this_thread::sleep_for(100us);
  std::vector<double> latency_us(probes, 0);
  std::vector<weft::join_handle<void>> handles;
  handles.reserve(probes);
  for (std::size_t i = 0; i < probes; ++i) {
    const weft::priority prio = i % 2 == 0 ? weft::priority::high : weft::priority::background;
    const auto t0 = bench::wall::now();
    double* slot = &latency_us[i];  // each probe its own slot; read after the joins
    handles.push_back(pool.spawn(prio, [slot, t0]() -> weft::task<void> {
      *slot = bench::ns_since(t0) / 1e3;
      co_return;
    }));
    std::this_thread::sleep_for(probe_interval);
  }
  for (auto& h : handles) {
    if (!h.join()) bench::fail("priority_latency", "probe failed");
  }
  sat.stop.store(true, std::memory_order_release);  // pairs with background_chain's acquire load
  while (sat.live_chains.load(std::memory_order_acquire) != 0) std::this_thread::sleep_for(100us);
  std::vector<double> high, background;
  for (std::size_t i = 0; i < probes; ++i) (i % 2 == 0 ? high : background).push_back(latency_us[i]);
  bench::report_priority_latency(runtime_name, high, background);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::args a = bench::parse_args(argc, argv, /*with_pool=*/true);
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
  if (a.wants("timeout_churn")) timeout_churn(a);
  if (a.wants("cpu_scaling")) cpu_scaling(a);
  if (a.wants("pool_spawn_join_1024")) pool_spawn_join_1024(a);
  if (a.wants("pool_yield_storm")) pool_yield_storm(a);
  if (a.wants("pool_nested_spawn")) pool_nested_spawn(a);
  if (a.wants("steal_imbalance")) steal_imbalance(a);
  if (a.wants("external_producers")) external_producers(a);
  if (a.wants("priority_latency")) priority_latency(a);
  if (a.wants("task_memory")) task_memory(a);  // last: it ends the process
  return 0;
}
