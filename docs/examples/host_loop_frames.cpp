// docs/examples/host_loop_frames.cpp — a host loop (a game or UI loop) driving a local_domain.
//
// The domain owns no thread: the host creates it and, once per frame, gives it a time budget with
// run_for(budget). run_for runs turns while something is ready and the budget is not spent (the
// budget is checked before each turn) and returns what it did. Work arrives three ways:
//   * tasks spawned on the domain by the host (an "animation" that sleeps between steps);
//   * dispatch(fn) from a loader thread through a copy of the domain's local_spawner;
//   * dispatch_future(factory) from the same thread (fire-and-forget tasks).
// Everything runs on the host thread, so the frame state below needs no lock.
// Exits non-zero on a wrong result.
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <thread>

using namespace std::chrono_literals;

namespace {

struct frame_state {  // host thread only
  int animation_steps = 0;
  int assets_loaded = 0;
  int textures_uploaded = 0;
  std::thread::id owner = std::this_thread::get_id();
  int touched_elsewhere = 0;
  void touch() {
    if (std::this_thread::get_id() != owner) ++touched_elsewhere;
  }
};

constexpr int assets = 20;

}  // namespace

int main() {
  weft::local_domain domain;
  frame_state state;

  // An animation: ten steps, one every 2 ms, on the host thread.
  auto animation = domain.spawn([&state]() -> weft::task<int> {
    for (int i = 0; i < 10; ++i) {
      co_await weft::sleep(2ms);
      state.touch();
      ++state.animation_steps;
    }
    co_return state.animation_steps;
  });

  // A loader thread: "loads" assets and hands each to the host.
  std::atomic<bool> loader_done{false};
  std::thread loader([spawner = domain.spawner(), &state, &loader_done]() mutable {
    for (int i = 0; i < assets; ++i) {
      std::this_thread::sleep_for(100us);  // reading a file, say
      for (;;) {
        const weft::submit_result sent = spawner.dispatch([&state] {
          state.touch();
          ++state.assets_loaded;
        });
        if (sent) break;
        std::this_thread::sleep_for(100us);  // `full`: the host is behind; try again
      }
      (void)spawner.dispatch_future([&state]() -> weft::task<void> {
        co_await weft::yield_now();  // an upload step that gives other work a turn
        state.touch();
        ++state.textures_uploaded;
      });
    }
    loader_done = true;
  });

  // The host loop: a frame every ~4 ms, each with a 1 ms budget for the domain.
  int frames = 0;
  std::size_t steps = 0, inbox = 0;
  while (frames < 10'000) {
    ++frames;
    const weft::run_stats st = domain.run_for(1ms);
    steps += st.drive_steps;
    inbox += st.inbox_commands;
    // ... simulate, render ...
    std::this_thread::sleep_for(1ms);
    if (loader_done && animation.is_finished() && state.assets_loaded == assets && state.textures_uploaded == assets) break;
  }
  loader.join();

  const int animated = animation.join().value();
  std::printf("%d frames, %zu drive steps, %zu inbox commands; animation %d/10, assets %d/%d, textures %d/%d\n",
              frames, steps, inbox, animated, state.assets_loaded, assets, state.textures_uploaded, assets);
  const bool ok = animated == 10 && state.assets_loaded == assets && state.textures_uploaded == assets &&
                  state.touched_elsewhere == 0 && inbox >= static_cast<std::size_t>(2 * assets);
  if (!ok) {
    std::fprintf(stderr, "host_loop_frames: wrong result\n");
    return 1;
  }
  return 0;
}
