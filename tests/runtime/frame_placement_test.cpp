// frame_placement_test.cpp — a factory task's frame in its cell's block (frame_placement.hpp):
// from the second spawn of a factory type on, the root frame sits in the cell's block; a frame the
// factory makes first and does not return keeps the cell's block alive wherever it goes, is freed
// where it is destroyed, and leaves the task itself correct; a frame that dies inside the factory
// gives the room back. Under AddressSanitizer these are also use-after-free and leak checks.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "support.hpp"

using weft_test::gate;
using weft_test::gate_leaf;

namespace {

// Whether the task being polled has its root frame in its cell's block.
bool frame_in_block() { return weft::detail::current_task()->frame_in_block(); }

weft::task<int> placed_probe(int value, bool* placed) {
  if (placed != nullptr) *placed = frame_in_block();
  co_return value;
}

// One coroutine for every frame below, so that a frame made first has the root's size.
weft::task<int> plain_value(int value) { co_return value; }

// Keeps a new frame in `stash`. Out of line: clang 14 at -O2 and above may elide the allocation of
// a frame that is stored and then followed by a throw in the same function, placing it on the
// stack of a function that returns (its CoroElide pass misses the escape); weft cannot prevent
// that, and these tests are about frames that do live on.
[[gnu::noinline]] void stash_one(std::vector<weft::task<int>>* stash) { stash->push_back(plain_value(1)); }

// What a factory does before it returns plain_value(2).
enum class before_return { nothing, stash_a_frame, make_and_drop_a_frame, stash_then_throw, make_then_throw };

struct configurable_factory {
  before_return* mode;
  std::vector<weft::task<int>>* stash;
  weft::task<int> operator()() const {
    switch (*mode) {
      case before_return::nothing:
        break;
      case before_return::stash_a_frame:
        stash_one(stash);
        break;
      case before_return::make_and_drop_a_frame: {
        weft::task<int> dropped = plain_value(1);
        break;
      }
      case before_return::stash_then_throw:
        stash_one(stash);
        throw std::runtime_error("factory failed");
      case before_return::make_then_throw: {
        weft::task<int> dropped = plain_value(1);
        throw std::runtime_error("factory failed");
      }
    }
    return plain_value(2);
  }
};

// A loop and a configurable_factory whose type has run once (its frame size learned).
class learned_factory : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(run_one().value(), 2); }  // the returned frame came first

  // Runs one task of the factory to completion and returns its output.
  weft::expected<int, weft::join_error> run_one() {
    auto h = loop.spawn(factory);
    loop.run();
    return h.join();
  }

  weft::event_loop loop;
  before_return mode = before_return::nothing;
  std::vector<weft::task<int>> stash;
  const configurable_factory factory{&mode, &stash};
};

}  // namespace

TEST(frame_placement, from_the_second_spawn_of_a_factory_type_the_frame_is_in_the_cell_block) {
  weft::event_loop loop;
  bool placed[3] = {true, false, false};
  for (bool& p : placed) {
    bool* out = &p;
    auto h = loop.spawn([out] { return placed_probe(5, out); });
    loop.run();
    auto r = h.join();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, 5);
  }
  EXPECT_FALSE(placed[0]);  // the first spawn learns the frame's size
  EXPECT_TRUE(placed[1]);
  EXPECT_TRUE(placed[2]);
}

weft::task<int> large_probe(bool* placed, std::array<std::uint64_t, 16> data) {
  *placed = frame_in_block();
  std::uint64_t sum = 0;
  for (std::uint64_t d : data) sum += d;  // the copied parameter lives in the frame
  co_return static_cast<int>(sum);
}

TEST(frame_placement, a_factory_type_whose_frames_vary_in_size_stops_getting_a_room) {
  struct either_factory {
    bool large;
    bool* placed;
    weft::task<int> operator()() const {
      std::array<std::uint64_t, 16> data{};
      data[0] = 1;
      return large ? large_probe(placed, data) : placed_probe(1, placed);
    }
  };
  weft::event_loop loop;
  auto run = [&loop](bool large) {
    bool placed = false;
    auto h = loop.spawn(either_factory{large, &placed});
    loop.run();
    EXPECT_TRUE(h.join().has_value());
    return placed;
  };
  EXPECT_FALSE(run(false));  // learns the small frame's size
  EXPECT_TRUE(run(false));
  EXPECT_FALSE(run(true));   // another size: the type's rooms would be wasted, so none from now on
  EXPECT_FALSE(run(false));
  EXPECT_FALSE(run(false));
}

TEST(frame_placement, a_placed_frame_suspended_across_polls_resumes_and_completes) {
  weft::event_loop loop;
  auto factory = [](gate* g, bool* placed) {
    return [g, placed]() -> weft::task<int> {
      co_await gate_leaf{g};
      *placed = frame_in_block();
      co_return 3;
    };
  };
  gate first;
  first.open = true;
  bool placed = false;
  auto warm = loop.spawn(factory(&first, &placed));
  loop.run();
  ASSERT_TRUE(warm.join().has_value());

  gate g;
  auto h = loop.spawn(factory(&g, &placed));
  loop.run_ready_tasks();
  EXPECT_EQ(g.polls, 1);
  g.open = true;
  std::move(g.waiter).wake();
  loop.run();
  auto r = h.join();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 3);
  EXPECT_TRUE(placed);
}

TEST_F(learned_factory, a_frame_the_factory_keeps_outlives_the_task_and_runs_later) {
  mode = before_return::stash_a_frame;
  auto r = run_one();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 2);
  ASSERT_EQ(stash.size(), 1u);
  // The task is complete and its handle gone; the stashed frame, which took the room, still
  // holds the block. It runs as a task of its own and is freed there.
  auto later = loop.spawn(std::move(stash.back()));
  stash.clear();
  loop.run();
  auto lr = later.join();
  ASSERT_TRUE(lr.has_value());
  EXPECT_EQ(*lr, 1);
}

TEST_F(learned_factory, a_kept_frame_destroyed_on_another_thread_releases_the_block_there) {
  mode = before_return::stash_a_frame;
  for (int i = 0; i < 8; ++i) ASSERT_EQ(run_one().value(), 2);
  ASSERT_EQ(stash.size(), 8u);
  std::thread other([this] { stash.clear(); });  // destroys the frames, never run
  other.join();
}

TEST_F(learned_factory, a_frame_dropped_inside_the_factory_gives_the_room_back) {
  mode = before_return::make_and_drop_a_frame;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(run_one().value(), 2);
}

TEST_F(learned_factory, a_factory_that_throws_after_making_a_frame_completes_as_panicked) {
  for (before_return m : {before_return::make_then_throw, before_return::stash_then_throw}) {
    mode = m;
    auto r = run_one();
    ASSERT_FALSE(r.has_value());
    ASSERT_TRUE(r.error().is_panicked());
    EXPECT_EQ(weft_test::what_of(r.error().exception()), "factory failed");
  }
  ASSERT_EQ(stash.size(), 1u);  // stash_then_throw's frame, still holding its cell's block
  stash.clear();
}

TEST(frame_placement, a_loop_destroyed_with_placed_frames_suspended_frees_them) {
  gate open;
  open.open = true;
  gate never;
  bool placed = false;
  auto factory = [&placed](gate* g) {
    return [g, &placed]() -> weft::task<void> {
      placed = frame_in_block();
      co_await gate_leaf{g};
    };
  };
  std::vector<weft::join_handle<void>> handles;
  {
    weft::event_loop loop;
    auto warm = loop.spawn(factory(&open));
    loop.run();
    ASSERT_TRUE(warm.join().has_value());
    for (int i = 0; i < 16; ++i) handles.push_back(loop.spawn(factory(&never)));
    loop.run_ready_tasks();
    EXPECT_EQ(never.polls, 16);
    EXPECT_TRUE(placed);
  }  // the loop cancels the suspended tasks and destroys their frames; the handles outlive it
  for (auto& h : handles) EXPECT_EQ(h.join().error(), weft::join_error::cancelled);
}
