// docs/examples/cross_thread_dispatch.cpp — runtime workers reporting into a host's local_domain.
//
// A host thread (think: the UI thread) owns a local_domain. A weft::runtime computes on its
// workers; each task sends its result to the host with local_spawner::dispatch, so the host's
// model is only ever touched on the host thread. Tasks also use dispatch_future to run a small
// task on the host (for instance, an animation of the new result). The host drives the domain
// until every result arrived. Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <cstdio>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

struct model {  // host thread only
  std::vector<long> results;
  int highlighted = 0;
  int wrong_thread = 0;
  std::thread::id host = std::this_thread::get_id();
  void check() {
    if (std::this_thread::get_id() != host) ++wrong_thread;
  }
};

long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

constexpr int jobs = 12;

}  // namespace

int main() {
  weft::local_domain ui;
  model m;
  m.results.assign(jobs, -1);

  auto rt = weft::runtime::builder().workers(3).build();
  for (int i = 0; i < jobs; ++i) {
    (void)rt.scheduler().spawn_anywhere([i, ui_spawner = ui.spawner(), &m]() mutable -> weft::task<void> {
      const long value = fib(15 + i % 5);  // on a worker
      co_await weft::yield_now();
      // Back to the host: a plain callback, retried while the host's inbox is full.
      while (!ui_spawner.dispatch([&m, i, value] {
        m.check();
        m.results[static_cast<std::size_t>(i)] = value;
      })) {
        co_await weft::sleep(100us);
      }
      // And a fire-and-forget task that runs on the host.
      (void)ui_spawner.dispatch_future([&m]() -> weft::task<void> {
        co_await weft::yield_now();
        m.check();
        ++m.highlighted;
      });
    });
  }

  // The host loop.
  auto all_in = [&] {
    for (long r : m.results) {
      if (r < 0) return false;
    }
    return m.highlighted == jobs;
  };
  for (int frame = 0; frame < 20'000 && !all_in(); ++frame) {
    (void)ui.run_for(2ms);
    if (!all_in()) std::this_thread::sleep_for(200us);
  }
  const bool drained = rt.drain(10s) == weft::drain_outcome::drained;
  (void)ui.run_for(2ms);  // whatever the last tasks dispatched
  const weft::stop_outcome out = std::move(rt).stop();

  bool ok = all_in() && m.wrong_thread == 0 && drained && out.is_complete();
  for (int i = 0; i < jobs; ++i) ok = ok && m.results[static_cast<std::size_t>(i)] == fib(15 + i % 5);
  std::printf("%d results on the host thread, %d highlighted, stop %s\n", jobs, m.highlighted,
              out.is_complete() ? "complete" : "not complete");
  if (!ok) {
    std::fprintf(stderr, "cross_thread_dispatch: wrong result\n");
    return 1;
  }
  return 0;
}
