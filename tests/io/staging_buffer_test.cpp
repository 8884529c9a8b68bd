// staging_buffer_test.cpp — the per-thread cache of staging buffers: a freed buffer serves the
// next operation of its size class on the same thread, small buffers bypass the cache, and the
// cache stays within its bound. Under ASan/TSan the cache is off by design (every buffer goes to
// the general allocator, so a use after free stays visible): those tests report skipped there.
#include <gtest/gtest.h>

#include <thread>
#include <deque>

#include <weft/detail/block_recycler.hpp>
#include <weft/io/detail/staging_buffer.hpp>

namespace weft::detail {
namespace {

#define SKIP_UNLESS_CACHING()                                                        \
  do {                                                                               \
    if (!recycler_enabled) GTEST_SKIP() << "staging buffers are not cached under ASan/TSan (by design)"; \
  } while (false)

TEST(staging_buffer, a_size_rounds_up_to_its_class_and_zero_holds_nothing) {
  EXPECT_EQ(staging_buffer(0).get(), nullptr);
  EXPECT_EQ(staging_buffer(0).capacity(), 0u);
  EXPECT_EQ(staging_buffer(100).capacity(), 100u) << "below the cache's smallest class: exact";
  if (recycler_enabled) {
    EXPECT_EQ(staging_buffer(staging_cache_min_block).capacity(), staging_cache_min_block);
    EXPECT_EQ(staging_buffer(staging_cache_min_block + 1).capacity(), 2 * staging_cache_min_block);
    EXPECT_EQ(staging_buffer(16 * 1024).capacity(), 16u * 1024);
    EXPECT_EQ(staging_buffer(staging_cache_max_block).capacity(), staging_cache_max_block);
  }
  // Every byte asked for is writable (ASan checks the bound where the cache is off).
  staging_buffer b(5000);
  ASSERT_GE(b.capacity(), 5000u);
  for (std::size_t i = 0; i < 5000; ++i) b.get()[i] = std::byte{1};
}

TEST(staging_buffer, a_freed_buffer_serves_the_next_request_of_its_class) {
  SKIP_UNLESS_CACHING();
  std::byte* first = nullptr;
  {
    staging_buffer a(16 * 1024);
    first = a.get();
  }
  const std::size_t cached = staging_buffer::cached_bytes();
  EXPECT_GE(cached, 16u * 1024);
  staging_buffer b(12 * 1024);  // the same class (16 KiB)
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(staging_buffer::cached_bytes(), cached - 16 * 1024);
}

TEST(staging_buffer, small_buffers_are_not_cached) {
  SKIP_UNLESS_CACHING();
  const std::size_t before = staging_buffer::cached_bytes();
  { staging_buffer small(staging_cache_min_block - 1); }
  EXPECT_EQ(staging_buffer::cached_bytes(), before);
}

TEST(staging_buffer, the_cache_keeps_at_most_its_bound) {
  SKIP_UNLESS_CACHING();
  {
    std::deque<staging_buffer> many;  // a deque: the buffers never move
    for (std::size_t i = 0; i < 3 * staging_cache_max_bytes / staging_cache_max_block; ++i) {
      many.emplace_back(staging_cache_max_block);
    }
  }
  EXPECT_GT(staging_buffer::cached_bytes(), 0u);
  EXPECT_LE(staging_buffer::cached_bytes(), staging_cache_max_bytes);
}

TEST(staging_buffer, the_cache_keeps_at_most_its_count_of_one_class) {
  SKIP_UNLESS_CACHING();
  // Another thread, so the count starts at zero whatever this one cached before.
  std::size_t cached = 0;
  std::thread([&] {
    {
      std::deque<staging_buffer> many;  // a deque: the buffers never move
      for (unsigned i = 0; i < 3 * staging_cache_max_per_class; ++i) many.emplace_back(staging_cache_min_block);
    }
    cached = staging_buffer::cached_bytes();
  }).join();
  EXPECT_EQ(cached, staging_cache_max_per_class * staging_cache_min_block);
}

TEST(staging_buffer, each_thread_has_a_cache_of_its_own) {
  SKIP_UNLESS_CACHING();
  { staging_buffer warm(64 * 1024); }
  const std::size_t here = staging_buffer::cached_bytes();
  std::size_t there_before = 1;
  std::size_t there_after = 0;
  std::thread other([&] {
    there_before = staging_buffer::cached_bytes();
    { staging_buffer b(64 * 1024); }
    there_after = staging_buffer::cached_bytes();
  });
  other.join();
  EXPECT_EQ(there_before, 0u) << "a new thread starts with an empty cache";
  EXPECT_EQ(there_after, 64u * 1024);
  EXPECT_EQ(staging_buffer::cached_bytes(), here) << "the other thread's free stayed there";
}

}  // namespace
}  // namespace weft::detail
