// weft-bench-asio — the benchmark scenarios on Boost.Asio (1.74) with C++20 coroutines
// (asio::awaitable, co_spawn). Prints `scenario=<name> runtime=asio value=<number> unit=<unit>`.
//
// Shape of the "runtime": one io_context per thread, each run by exactly one thread (concurrency
// hint 1), 2 threads unless a scenario says otherwise. That is the closest Asio has to weft's
// pinned workers (a coroutine stays on the io_context it was spawned on), and it avoids the single
// shared, locked queue of asio::thread_pool. "Spawn anywhere" is round-robin over the contexts;
// "spawn here" is co_spawn on the current coroutine's executor. Asio 1.74 has no join handle and
// no channel: joins are a completion counter whose last completion sends to a one-slot mailbox,
// and the mailbox (the same design as the weft and Rust programs' one) stores the waiting
// coroutine's completion handler. See tools/bench/README.md.
//
//   weft-bench-asio [--scale F] [--scenario NAME|all] [--list]
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "../../bench_alloc_probe.hpp"
#include "../../bench_common.hpp"

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using namespace std::chrono_literals;

namespace {

constexpr const char* runtime_name = "asio";

// N io_contexts, one thread each.
class pool {
 public:
  explicit pool(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(contexts_.back()->get_executor());
    }
    for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([ctx = contexts_[i].get()] { ctx->run(); });
  }
  ~pool() {
    guards_.clear();
    for (auto& t : threads_) t.join();
  }
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  asio::io_context& context(std::size_t i) { return *contexts_[i]; }
  // Round-robin, like weft's spawn_anywhere.
  asio::io_context& pick() { return *contexts_[next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()]; }

  // Runs `body` on context 0 and blocks the caller until it finished.
  template <class T>
  T run_in_task(awaitable<T> body) {
    return asio::co_spawn(context(0), std::move(body), asio::use_future).get();
  }

 private:
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> next_{0};
};

// A one-slot mailbox. recv() stores the waiting coroutine's completion handler (type-erased on the
// heap: Asio 1.74 has no any_completion_handler); send() posts it to its own executor.
class mailbox {
 public:
  void send(std::uint64_t v) {
    std::unique_ptr<waiter_base> waiting;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (value_) bench::fail("mailbox", "mailbox holds one message");
      if (waiter_) {
        waiting = std::move(waiter_);
      } else {
        value_ = v;
      }
    }
    if (waiting) waiting->complete(v);
  }

  awaitable<std::uint64_t> recv() {
    return asio::async_initiate<decltype(use_awaitable), void(std::uint64_t)>(
        [this](auto handler) {
          std::unique_lock<std::mutex> lock(mutex_);
          if (value_) {
            const std::uint64_t v = *value_;
            value_.reset();
            lock.unlock();
            auto ex = asio::get_associated_executor(handler);
            asio::post(ex, [h = std::move(handler), v]() mutable { std::move(h)(v); });
            return;
          }
          waiter_ = std::make_unique<waiter<decltype(handler)>>(std::move(handler));
        },
        use_awaitable);
  }

 private:
  struct waiter_base {
    virtual ~waiter_base() = default;
    virtual void complete(std::uint64_t v) = 0;
  };
  template <class H>
  struct waiter final : waiter_base {
    explicit waiter(H&& h) : handler(std::move(h)) {}
    void complete(std::uint64_t v) override {
      auto ex = asio::get_associated_executor(handler);
      asio::post(ex, [h = std::move(handler), v]() mutable { std::move(h)(v); });
    }
    H handler;
  };

  std::mutex mutex_;
  std::optional<std::uint64_t> value_;
  std::unique_ptr<waiter_base> waiter_;
};

// What a join of many spawned coroutines needs in Asio: a count of outstanding completions; the
// last one sends the total to a mailbox the joiner waits on.
struct join_set {
  explicit join_set(std::size_t n) : remaining(n) {}
  void finished(std::uint64_t v) {
    sum.fetch_add(v, std::memory_order_relaxed);
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) done.send(sum.load(std::memory_order_relaxed));
  }
  auto handler() {
    return [this](std::exception_ptr e, auto... v) {
      if (e) std::rethrow_exception(e);
      finished((std::uint64_t{0} + ... + static_cast<std::uint64_t>(v)));
    };
  }
  std::atomic<std::size_t> remaining;
  std::atomic<std::uint64_t> sum{0};
  mailbox done;
};

awaitable<std::uint64_t> trivial(std::uint64_t i) { co_return i; }

// ---- spawn_join_1 -------------------------------------------------------------------------------
void spawn_join_1(const bench::args& a) {
  pool p(2);
  const std::size_t n = a.count(20'000);
  std::vector<double> samples;
  samples.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto t0 = bench::wall::now();
    const std::uint64_t v = asio::co_spawn(p.pick(), trivial(i), asio::use_future).get();
    samples.push_back(bench::ns_since(t0));
    if (v != i) bench::fail("spawn_join_1", "wrong result");
  }
  bench::report("spawn_join_1", runtime_name, bench::median(samples), "ns");
}

// ---- spawn_join_1024 ------------------------------------------------------------------------------
awaitable<std::vector<double>> spawn_join_1024_body(std::size_t batches) {
  auto ex = co_await asio::this_coro::executor;  // spawn here
  std::vector<double> samples;
  for (std::size_t b = 0; b < batches; ++b) {
    const auto t0 = bench::wall::now();
    join_set joins(1024);
    for (std::uint64_t i = 0; i < 1024; ++i) asio::co_spawn(ex, trivial(i), joins.handler());
    const std::uint64_t sum = co_await joins.done.recv();
    samples.push_back(bench::ns_since(t0) / 1e3);
    if (sum != 1023 * 1024 / 2) bench::fail("spawn_join_1024", "wrong sum");
  }
  co_return samples;
}

void spawn_join_1024(const bench::args& a) {
  pool p(2);
  const auto samples = p.run_in_task(spawn_join_1024_body(a.count(200)));
  bench::report("spawn_join_1024", runtime_name, bench::median(samples), "us");
}

// ---- yield_storm --------------------------------------------------------------------------------
awaitable<void> yielder() {
  auto ex = co_await asio::this_coro::executor;
  for (int y = 0; y < 8; ++y) co_await asio::post(ex, use_awaitable);
}

awaitable<std::vector<double>> yield_storm_body(pool& p, std::size_t reps, std::size_t tasks) {
  std::vector<double> samples;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto t0 = bench::wall::now();
    join_set joins(tasks);
    for (std::size_t i = 0; i < tasks; ++i) asio::co_spawn(p.pick(), yielder(), joins.handler());
    co_await joins.done.recv();
    samples.push_back(bench::ns_since(t0) / 1e6);
  }
  co_return samples;
}

void yield_storm(const bench::args& a) {
  pool p(2);
  const auto samples = p.run_in_task(yield_storm_body(p, a.count(20), a.count(10'000)));
  bench::report("yield_storm", runtime_name, bench::median(samples), "ms");
}

// ---- ping_pong -----------------------------------------------------------------------------------
awaitable<void> pong(mailbox& in, mailbox& out, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) out.send(co_await in.recv());
}
awaitable<bool> ping(mailbox& out, mailbox& in, std::uint64_t n) {
  bool ok = true;
  for (std::uint64_t i = 0; i < n; ++i) {
    out.send(i);
    ok = ok && (co_await in.recv()) == i;
  }
  co_return ok;
}

// `threads` 2: the tasks on contexts 0 and 1 (ping_pong); 1: both on the one context (ping_pong_local).
double ping_pong_ns(const bench::args& a, std::size_t threads = 2) {
  pool p(threads);
  const std::uint64_t n = a.count(100'000);
  mailbox to_b, to_a;
  const auto t0 = bench::wall::now();
  auto b = asio::co_spawn(p.context(threads - 1), pong(to_b, to_a, n), asio::use_future);
  auto a_task = asio::co_spawn(p.context(0), ping(to_b, to_a, n), asio::use_future);
  const bool ok = a_task.get();
  b.get();
  const double ns = bench::ns_since(t0);
  if (!ok) bench::fail("ping_pong", "wrong exchange");
  return ns / static_cast<double>(n);
}
void ping_pong(const bench::args& a) { bench::report("ping_pong", runtime_name, ping_pong_ns(a), "ns"); }

// ping_pong_pinned: the figure tokio and async-executor measure with one single-threaded executor
// per task, so that every message crosses threads. Here each task already has its own thread's
// io_context: the same exchange, run again.
void ping_pong_pinned(const bench::args& a) {
  bench::report("ping_pong_pinned", runtime_name, ping_pong_ns(a), "ns");
}

// ping_pong_local: the same timed exchange with no message crossing threads: one io_context, run
// by one thread, runs both tasks.
void ping_pong_local(const bench::args& a) {
  bench::report("ping_pong_local", runtime_name, ping_pong_ns(a, 1), "ns");
}

// ping_pong_cross: the share of messages received on another thread than the one that sent them,
// from a second, untimed exchange of tagged messages (the same placement as above).
awaitable<std::uint64_t> pong_tagged(mailbox& in, mailbox& out, std::uint64_t n) {
  std::uint64_t crossed = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t m = co_await in.recv();
    crossed += bench::message_crossed(m) ? 1 : 0;
    out.send(bench::tagged_message(bench::message_seq(m)));
  }
  co_return crossed;
}
awaitable<std::uint64_t> ping_tagged(mailbox& out, mailbox& in, std::uint64_t n) {
  std::uint64_t crossed = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    out.send(bench::tagged_message(i));
    const std::uint64_t m = co_await in.recv();
    if (bench::message_seq(m) != i) bench::fail("ping_pong", "wrong exchange");
    crossed += bench::message_crossed(m) ? 1 : 0;
  }
  co_return crossed;
}

void ping_pong_cross(const bench::args& a) {
  pool p(2);
  const std::uint64_t n = a.count(20'000);
  mailbox to_b, to_a;
  auto b = asio::co_spawn(p.context(1), pong_tagged(to_b, to_a, n), asio::use_future);
  auto a_task = asio::co_spawn(p.context(0), ping_tagged(to_b, to_a, n), asio::use_future);
  const std::uint64_t crossed = a_task.get() + b.get();
  bench::report("ping_pong_cross", runtime_name, static_cast<double>(crossed) / static_cast<double>(2 * n), "share");
}

// ---- timers_100k ---------------------------------------------------------------------------------
awaitable<void> sleeper() {
  asio::steady_timer t(co_await asio::this_coro::executor, 1ms);
  co_await t.async_wait(use_awaitable);
}

awaitable<double> timers_body(pool& p, std::size_t n) {
  const auto t0 = bench::wall::now();
  join_set joins(n);
  for (std::size_t i = 0; i < n; ++i) asio::co_spawn(p.pick(), sleeper(), joins.handler());
  co_await joins.done.recv();
  co_return bench::ns_since(t0) / 1e6;
}

// ---- timeout_churn ---------------------------------------------------------------------------------
// Asio's timeout idiom: a timer armed for an hour around an operation (here ready at once), then
// cancelled as the timer is dropped; its aborted wait runs later on the same loop. One io_context
// on the calling thread; total ms, the aborted waits included.
awaitable<double> timeout_churn_body(std::size_t n) {
  auto ex = co_await asio::this_coro::executor;
  const auto t0 = bench::wall::now();
  std::size_t done = 0;
  std::size_t aborted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    asio::steady_timer limit(ex, std::chrono::hours(1));
    limit.async_wait([&aborted](const boost::system::error_code& e) {
      if (e == asio::error::operation_aborted) ++aborted;
    });
    done += 1;  // the operation, ready at once
  }
  while (aborted < n) co_await asio::post(ex, use_awaitable);
  if (done != n) bench::fail("timeout_churn", "an operation was lost");
  co_return bench::ns_since(t0) / 1e6;
}

void timeout_churn(const bench::args& a) {
  asio::io_context ctx(1);
  auto result = asio::co_spawn(ctx, timeout_churn_body(a.count(1'000'000)), asio::use_future);
  ctx.run();
  bench::report("timeout_churn", runtime_name, result.get(), "ms");
}

void timers_100k(const bench::args& a) {
  pool p(2);
  const double ms = p.run_in_task(timers_body(p, a.count(100'000)));
  bench::report("timers_100k", runtime_name, ms, "ms");
}

// ---- cpu_scaling ---------------------------------------------------------------------------------
awaitable<std::uint64_t> kernel_task(std::uint64_t i) { co_return bench::kernel(i); }

awaitable<double> cpu_body(pool& p, std::size_t n) {
  const auto t0 = bench::wall::now();
  join_set joins(n);
  for (std::uint64_t i = 0; i < n; ++i) asio::co_spawn(p.pick(), kernel_task(i), joins.handler());
  const std::uint64_t acc = co_await joins.done.recv();
  const double s = bench::ns_since(t0) / 1e9;
  if (acc == 1) bench::fail("cpu_scaling", "impossible");  // keeps the results alive
  co_return static_cast<double>(n) / s;
}

void cpu_scaling(const bench::args& a) {
  const std::size_t n = a.count(2'000);
  double one = 0, two = 0;
  {
    pool p(1);
    one = p.run_in_task(cpu_body(p, n));
  }
  {
    pool p(2);
    two = p.run_in_task(cpu_body(p, n));
  }
  bench::report("cpu_1w", runtime_name, one, "tasks/s");
  bench::report("cpu_2w", runtime_name, two, "tasks/s");
  bench::report("cpu_speedup", runtime_name, two / one, "x");
}

// ---- task_memory ---------------------------------------------------------------------------------
// Never completes: the completion handler (which owns the suspended coroutine — dropping it would
// destroy the frame) is kept in a per-thread list, as any Asio operation that is pending keeps it.
template <class H>
std::vector<H>& parked_handlers() {
  static thread_local std::vector<H> handlers;
  return handlers;
}
awaitable<void> never_ready() {
  return asio::async_initiate<decltype(use_awaitable), void()>(
      [](auto handler) { parked_handlers<decltype(handler)>().push_back(std::move(handler)); }, use_awaitable);
}

std::atomic<std::size_t> parked{0};

awaitable<void> parked_task() {
  parked.fetch_add(1, std::memory_order_relaxed);
  co_await never_ready();
}

awaitable<void> spawn_parked(std::size_t n) {
  auto ex = co_await asio::this_coro::executor;  // spawn here
  for (std::size_t i = 0; i < n; ++i) asio::co_spawn(ex, parked_task(), asio::detached);
}

[[noreturn]] void task_memory(const bench::args& a) {
  // Not destroyed: the process ends right after reporting.
  auto* p = new pool(2);
  const std::size_t n = a.count(1'000'000);
  p->run_in_task([]() -> awaitable<void> { co_return; }());  // threads started and warm
  const std::uint64_t before = bench::rss_bytes();
  p->run_in_task(spawn_parked(n));
  while (parked.load(std::memory_order_relaxed) < n) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(5ms);  // the last parked handlers are stored just after the count
  const std::uint64_t after = bench::rss_bytes();
  const double per_task = static_cast<double>(after > before ? after - before : 0) / static_cast<double>(n);
  double frame = 0;
  {
    awaitable<void> probe = parked_task();  // frame allocated here, never started
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
  }
  if (a.wants("timers_100k")) timers_100k(a);
  if (a.wants("timeout_churn")) timeout_churn(a);
  if (a.wants("cpu_scaling")) cpu_scaling(a);
  if (a.wants("task_memory")) task_memory(a);
  return 0;
}
