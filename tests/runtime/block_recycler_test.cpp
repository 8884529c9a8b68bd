// block_recycler_test.cpp — the per-thread block cache behind task cells and coroutine frames:
// a freed block is handed out again to the next request of its size class on the same thread,
// the cache is bounded, and blocks freed on another thread stay there. Under ASan/TSan the
// recycler is off by design (every block goes to the general allocator): those tests report
// skipped there.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include <weft/detail/block_recycler.hpp>
#include <weft/weft.hpp>

using weft::detail::block_recycler;

// GTEST_SKIP returns from the function it is written in, so this must expand in the test body.
#define SKIP_UNLESS_RECYCLING()                                                          \
  do {                                                                                   \
    if (!weft::detail::recycler_enabled) {                                               \
      GTEST_SKIP() << "block recycling is off under ASan/TSan (by design)";              \
    }                                                                                    \
  } while (false)

TEST(block_recycler, size_classes_match_the_allocators_block_sizes) {
  EXPECT_EQ(block_recycler::block_size(block_recycler::class_of(1)), 24u);
  EXPECT_EQ(block_recycler::block_size(block_recycler::class_of(24)), 24u);
  EXPECT_EQ(block_recycler::block_size(block_recycler::class_of(25)), 40u);
  EXPECT_EQ(block_recycler::block_size(block_recycler::class_of(152)), 152u);
  EXPECT_EQ(block_recycler::block_size(block_recycler::class_of(153)), 168u);
  for (std::size_t n = 1; n <= weft::detail::recycler_max_block; ++n) {
    const std::size_t k = block_recycler::class_of(n);
    ASSERT_LT(k, block_recycler::class_count);
    ASSERT_GE(block_recycler::block_size(k), n);
    if (k > 0) {
      ASSERT_LT(block_recycler::block_size(k - 1), n) << "a request must land in the smallest class that fits";
    }
  }
}

TEST(block_recycler, a_freed_block_serves_the_next_request_of_its_class_on_the_same_thread) {
  SKIP_UNLESS_RECYCLING();
  void* a = block_recycler::allocate(100);
  const std::size_t before = block_recycler::cached_bytes();
  block_recycler::deallocate(a, 100);
  EXPECT_EQ(block_recycler::cached_bytes(), before + block_recycler::block_size(block_recycler::class_of(100)));
  void* b = block_recycler::allocate(97);  // same class as 100
  EXPECT_EQ(a, b);
  EXPECT_EQ(block_recycler::cached_bytes(), before);
  block_recycler::deallocate(b, 97);
}

TEST(block_recycler, blocks_larger_than_the_limit_are_never_cached) {
  SKIP_UNLESS_RECYCLING();
  const std::size_t before = block_recycler::cached_bytes();
  void* big = block_recycler::allocate(weft::detail::recycler_max_block + 1);
  block_recycler::deallocate(big, weft::detail::recycler_max_block + 1);
  EXPECT_EQ(block_recycler::cached_bytes(), before);
}

TEST(block_recycler, the_cache_of_a_thread_is_bounded) {
  SKIP_UNLESS_RECYCLING();
  std::thread([] {
    constexpr std::size_t size = 500;
    const std::size_t block = block_recycler::block_size(block_recycler::class_of(size));
    const std::size_t n = weft::detail::recycler_max_cached_bytes / block + 16;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < n; ++i) blocks.push_back(block_recycler::allocate(size));
    for (void* p : blocks) block_recycler::deallocate(p, size);
    EXPECT_LE(block_recycler::cached_bytes(), weft::detail::recycler_max_cached_bytes);
    // Caching still: at most a chain handed to the depot and the blocks freed since are missing.
    EXPECT_GT(block_recycler::cached_bytes(),
              weft::detail::recycler_max_cached_bytes - (weft::detail::recycler_chain_blocks + 16) * block);
  }).join();
}

TEST(block_recycler, blocks_a_full_cache_cannot_keep_serve_another_threads_allocations) {
  SKIP_UNLESS_RECYCLING();
  // One thread frees more blocks of a class than its cache holds (a pool worker completing what
  // another spawned); a thread whose cache has none of that class gets them back from the depot
  // instead of from malloc.
  constexpr std::size_t size = 296;  // a class no other test here uses
  const std::size_t block = block_recycler::block_size(block_recycler::class_of(size));
  const std::size_t n = weft::detail::recycler_max_cached_bytes / block + weft::detail::recycler_chain_blocks;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < n; ++i) blocks.push_back(block_recycler::allocate(size));
  std::thread([&] {
    for (void* p : blocks) block_recycler::deallocate(p, size);
  }).join();
  std::size_t refilled = 0;
  std::thread([&] {
    void* p = block_recycler::allocate(size);
    refilled = block_recycler::cached_bytes();  // what came with the block
    block_recycler::deallocate(p, size);
  }).join();
  EXPECT_EQ(refilled, (weft::detail::recycler_chain_blocks - 1) * block);
}

TEST(block_recycler, a_block_freed_on_another_thread_is_cached_there_not_here) {
  SKIP_UNLESS_RECYCLING();
  void* a = block_recycler::allocate(64);
  const std::size_t here_before = block_recycler::cached_bytes();
  std::size_t there = 0;
  std::thread([&] {
    block_recycler::deallocate(a, 64);
    there = block_recycler::cached_bytes();
  }).join();
  EXPECT_EQ(there, block_recycler::block_size(block_recycler::class_of(64)));
  EXPECT_EQ(block_recycler::cached_bytes(), here_before);
}

TEST(block_recycler, spawned_tasks_reuse_cells_and_frames_on_their_loop) {
  SKIP_UNLESS_RECYCLING();
  weft::event_loop loop;
  // Warm up: the first batch leaves its cells and frames in this thread's cache...
  for (int i = 0; i < 4; ++i) (void)loop.spawn([]() -> weft::task<int> { co_return 1; });
  loop.run();
  const std::size_t warm = block_recycler::cached_bytes();
  EXPECT_GT(warm, 0u);
  // ...and the next batch of the same shape takes them back out instead of growing the heap.
  std::vector<weft::join_handle<int>> hs;
  for (int i = 0; i < 4; ++i) hs.push_back(loop.spawn([]() -> weft::task<int> { co_return 2; }));
  EXPECT_LT(block_recycler::cached_bytes(), warm);
  loop.run();
  for (auto& h : hs) EXPECT_EQ(*h.join(), 2);
}
