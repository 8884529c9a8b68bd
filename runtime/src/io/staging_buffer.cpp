// staging_buffer.cpp — the per-thread cache of staging buffers (staging_buffer.hpp).
#include <weft/io/detail/staging_buffer.hpp>

#include <bit>
#include <new>

#include <weft/detail/block_recycler.hpp>

namespace weft::detail {

namespace {

// Class k holds blocks of staging_cache_min_block << k bytes.
constexpr std::size_t class_count =
    static_cast<std::size_t>(std::countr_zero(staging_cache_max_block / staging_cache_min_block)) + 1;
static_assert(std::has_single_bit(staging_cache_min_block) && std::has_single_bit(staging_cache_max_block));
static_assert((staging_cache_min_block << (class_count - 1)) == staging_cache_max_block);

constexpr std::size_t class_of(std::size_t size) noexcept {
  return static_cast<std::size_t>(std::countr_zero(std::bit_ceil(size) / staging_cache_min_block));
}
constexpr std::size_t block_size(std::size_t k) noexcept { return staging_cache_min_block << k; }

enum class phase : unsigned char { unused, open, closed };

// The free buffers are kept as pointers in the cache itself, not linked through the buffers: a
// buffer freed a while ago is cold, and reading a link out of it would cost a miss per take.
struct cache {
  std::byte* free[class_count][staging_cache_max_per_class];
  unsigned counts[class_count];
  std::size_t bytes;
  phase state;
};

// Constant-initialised and trivially destructible: no guard on the hot path.
thread_local constinit cache cache_{};  // seam-ok: an allocation cache, see staging_buffer.hpp

// One per thread that cached a buffer: empties the cache at thread exit and closes it.
struct staging_cache_cleanup {
  ~staging_cache_cleanup() {
    for (std::size_t k = 0; k < class_count; ++k) {
      while (cache_.counts[k] > 0) ::operator delete(cache_.free[k][--cache_.counts[k]]);
    }
    cache_.bytes = 0;
    cache_.state = phase::closed;
  }
};

bool cacheable(std::size_t size) noexcept {
  return recycler_enabled && size >= staging_cache_min_block && size <= staging_cache_max_block;
}

}  // namespace

staging_buffer::staging_buffer(std::size_t size) {
  if (size == 0) return;
  if (!cacheable(size)) {
    bytes_ = static_cast<std::byte*>(::operator new(size));
    capacity_ = size;
    return;
  }
  const std::size_t k = class_of(size);
  capacity_ = block_size(k);
  if (cache_.counts[k] > 0) {
    bytes_ = cache_.free[k][--cache_.counts[k]];
    cache_.bytes -= capacity_;
    return;
  }
  bytes_ = static_cast<std::byte*>(::operator new(capacity_));
}

staging_buffer::~staging_buffer() {
  if (bytes_ == nullptr) return;
  if (cacheable(capacity_)) {
    if (cache_.state == phase::unused) {
      // Constructed the first time this thread gets here; destroyed at its exit.
      static thread_local staging_cache_cleanup cleanup;  // seam-ok: see staging_buffer.hpp
      (void)cleanup;
      cache_.state = phase::open;
    }
    const std::size_t k = class_of(capacity_);
    if (cache_.state == phase::open && cache_.counts[k] < staging_cache_max_per_class &&
        cache_.bytes + capacity_ <= staging_cache_max_bytes) {
      cache_.free[k][cache_.counts[k]++] = bytes_;
      cache_.bytes += capacity_;
      return;
    }
  }
  ::operator delete(bytes_);
}

std::size_t staging_buffer::cached_bytes() noexcept { return cache_.bytes; }

}  // namespace weft::detail
