// docs/examples/placing_work.cpp — where spawned work runs.
//
//   runtime::scheduler().spawn / spawn_anywhere   the runtime picks a worker;
//   a worker's scheduler (builtins, worker_scheduler(i)).spawn
//                                                 that worker, even when the scheduler is
//                                                 copied to and used from another thread;
//   spawn_everywhere                              one task per worker, a handle each.
// The factory given to spawn is moved to the destination and invoked there, so state that must
// not cross threads is created in place. Tasks never change worker. Exits non-zero on a wrong
// placement.
#include <weft/weft.hpp>

#include <cstdio>
#include <set>
#include <thread>
#include <vector>

namespace {

// Not thread-safe, and meant to stay on the worker that made it.
struct worker_cache {
  std::size_t built_on = weft::builtins::current().worker().index;
  int hits = 0;
};

weft::task<std::size_t> which_worker() { co_return weft::builtins::current().worker().index; }

}  // namespace

int main() {
  auto rt = weft::runtime::builder().workers(3).build();
  bool ok = true;

  // 1. spawn_anywhere: spread over the workers by the runtime.
  std::vector<weft::join_handle<std::size_t>> anywhere;
  for (int i = 0; i < 9; ++i) anywhere.push_back(rt.scheduler().spawn_anywhere([] { return which_worker(); }));
  std::set<std::size_t> used;
  for (auto& h : anywhere) used.insert(h.join().value());
  std::printf("spawn_anywhere used %zu of %zu workers\n", used.size(), rt.worker_count());
  ok = ok && !used.empty();

  // 2. A worker's scheduler, carried to a foreign thread, still submits to that worker.
  weft::scheduler second = rt.worker_scheduler(1);
  std::size_t landed = 99;
  std::thread foreign([&] { landed = second.spawn([] { return which_worker(); }).join().value(); });
  foreign.join();
  std::printf("worker 1's scheduler, used from another thread, ran on worker %zu\n", landed);
  ok = ok && landed == 1;

  // 3. The factory runs on the destination: the cache is built on worker 2, and used there only.
  auto cached = rt.worker_scheduler(2).spawn([]() -> weft::task<std::size_t> {
    worker_cache cache;  // created in place
    for (int i = 0; i < 3; ++i) {
      co_await weft::yield_now();
      ++cache.hits;
    }
    co_return cache.built_on;
  });
  const std::size_t built_on = cached.join().value();
  std::printf("cache built on worker %zu\n", built_on);
  ok = ok && built_on == 2;

  // 4. spawn_everywhere: one task per worker, handles in worker order.
  auto everywhere = rt.scheduler().spawn_everywhere([] { return which_worker(); });
  for (std::size_t i = 0; i < everywhere.size(); ++i) ok = ok && everywhere[i].join().value() == i;
  std::printf("spawn_everywhere reached %zu workers\n", everywhere.size());
  ok = ok && everywhere.size() == rt.worker_count();

  ok = ok && std::move(rt).stop().is_complete();
  if (!ok) {
    std::fprintf(stderr, "placing_work: wrong result\n");
    return 1;
  }
  return 0;
}
