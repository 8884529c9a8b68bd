// docs/examples/thread_aware_relocation.cpp — values that adapt when they move between workers.
//
// spawn_anywhere(input, factory) and spawn_everywhere(input, factory) move `input` to the
// destination worker and call input.relocate(from, to) there, exactly once, before the factory
// runs. Here a `sharded_counter` keeps the index of the shard it should write to: relocation
// re-targets it to the destination worker's shard. What relocation does not do: moving or
// copying never relocates by itself, and spawn, block_on and joining never relocate.
// Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <memory>

namespace {

constexpr std::size_t workers = 3;

struct shards {
  std::array<std::atomic<int>, workers> per_worker{};
};

class sharded_counter {
 public:
  explicit sharded_counter(std::shared_ptr<shards> s) : shards_(std::move(s)) {}

  // The thread_aware hook: runs on the destination worker's thread.
  void relocate(weft::worker_id from, weft::worker_id to) {
    ++relocations_;
    from_external_ = from.is_external();
    shard_ = to.index;
  }
  void add(int n) { shards_->per_worker[shard_].fetch_add(n); }
  int relocations() const { return relocations_; }
  bool came_from_outside() const { return from_external_; }

 private:
  std::shared_ptr<shards> shards_;
  std::size_t shard_ = 0;
  int relocations_ = 0;
  bool from_external_ = false;
};
static_assert(weft::thread_aware<sharded_counter>);

}  // namespace

int main() {
  auto rt = weft::runtime::builder().workers(workers).build();
  auto counts = std::make_shared<shards>();
  bool ok = true;

  // One copy per worker; each copy is relocated to its own worker and counts into its shard.
  auto handles = rt.scheduler().spawn_everywhere(sharded_counter(counts), [](sharded_counter c) -> weft::task<int> {
    c.add(10);
    co_return c.relocations() * (c.came_from_outside() ? 1 : -1);
  });
  for (auto& h : handles) ok = ok && h.join().value() == 1;  // once each, from outside
  for (std::size_t w = 0; w < workers; ++w) {
    std::printf("shard %zu: %d\n", w, counts->per_worker[w].load());
    ok = ok && counts->per_worker[w].load() == 10;
  }

  // From inside worker 0: `from` is worker 0 now.
  const int from_inside = rt.worker_scheduler(0)
                              .spawn([counts]() -> weft::task<int> {
                                auto r = co_await weft::builtins::current().scheduler().spawn_anywhere(
                                    sharded_counter(counts),
                                    [](sharded_counter c) -> weft::task<int> { co_return c.came_from_outside() ? 0 : c.relocations(); });
                                co_return r.value();
                              })
                              .join()
                              .value();
  std::printf("relocated %d time(s) from worker 0\n", from_inside);
  ok = ok && from_inside == 1;

  // Ordinary spawn moves its captures without relocating them.
  const int plain = rt.scheduler()
                        .spawn([c = sharded_counter(counts)]() -> weft::task<int> { co_return c.relocations(); })
                        .join()
                        .value();
  ok = ok && plain == 0;

  ok = ok && std::move(rt).stop().is_complete();
  if (!ok) {
    std::fprintf(stderr, "thread_aware_relocation: wrong result\n");
    return 1;
  }
  return 0;
}
