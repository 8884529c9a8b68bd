// docs/examples/pool_to_local_domain.cpp — CPU work on a stealing_pool, its results handed back to
// the thread that owns the state they update.
//
// A host thread (a UI or game loop) owns its frame state and drives a local_domain once per
// frame. The heavy work — here, checksums of 64 "tiles" — runs on a stealing_pool, which spreads it
// over its workers and may move a job between them. Each job ends by dispatching its result to the
// domain's spawner: the closure runs on the host thread at a later frame, so the frame state needs
// no lock. The state lives in a weft::pinned<T>: had a pool job touched it directly, that access
// would throw usage_error instead of racing. Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

using namespace std::chrono_literals;

namespace {

constexpr int tiles = 64;

std::uint64_t checksum(int tile) {  // the CPU work: a few thousand multiply-adds
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(tile);
  for (int i = 0; i < 20'000; ++i) h = (h ^ static_cast<std::uint64_t>(i)) * 1099511628211ull;
  return h;
}

struct frame_state {
  std::vector<std::uint64_t> sums = std::vector<std::uint64_t>(tiles, 0);
  int received = 0;
};

}  // namespace

int main() {
  weft::local_domain domain;
  weft::pinned<frame_state> state;  // the host thread's; checked on every access
  auto pool = weft::stealing_pool::builder().workers(2).build();

  std::vector<weft::join_handle<void>> jobs;
  for (int t = 0; t < tiles; ++t) {
    const auto p = t < 8 ? weft::priority::high : weft::priority::normal;  // the visible tiles first
    jobs.push_back(pool.spawn(p, [t, spawner = domain.spawner(), &state]() -> weft::task<void> {
      const std::uint64_t sum = checksum(t);
      // Back to the host thread: the closure runs there, in a frame.
      while (!spawner.dispatch([t, sum, &state] {
        state->sums[static_cast<std::size_t>(t)] = sum;
        ++state->received;
      })) {
        co_await weft::yield_now();  // the domain's inbox is full: try again after other work
      }
      co_return;
    }));
  }

  // The host loop: one frame every millisecond until every result arrived.
  int frames = 0;
  while (state->received < tiles && frames < 10'000) {
    (void)domain.run_for(500us);
    ++frames;
    std::this_thread::sleep_for(500us);
  }
  for (auto& j : jobs) {
    if (!j.join()) {
      std::fprintf(stderr, "a pool job failed\n");
      return 1;
    }
  }

  // A pool job that touched the state directly would get usage_error, not a data race.
  auto stray = pool.spawn([&state]() -> weft::task<int> { co_return state->received; });
  const auto stray_result = stray.join();
  const bool refused = !stray_result && stray_result.error().is_panicked();

  int wrong = 0;
  for (int t = 0; t < tiles; ++t) wrong += state->sums[static_cast<std::size_t>(t)] != checksum(t);
  const weft::stop_outcome out = std::move(pool).stop_graceful();
  std::printf("%d tiles in %d frames, %d wrong; a stray access %s; pool stop: %s\n", state->received, frames, wrong,
              refused ? "was refused" : "was NOT refused", weft::to_string(out).c_str());
  return (state->received == tiles && wrong == 0 && refused && out.is_complete()) ? 0 : 1;
}
