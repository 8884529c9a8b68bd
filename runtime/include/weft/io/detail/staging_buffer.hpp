// weft/io/detail/staging_buffer.hpp — the bytes an I/O operation hands the kernel in place of the
// caller's buffer, taken from a per-thread cache of recently freed ones.
//
// Every socket read stages into a buffer as large as the caller's (often 16-64 KiB), and such a
// block is beyond glibc's per-thread cache: each read would cost a trip through malloc's bins and
// their coalescing. Staging buffers of at least `staging_cache_min_block` bytes are therefore kept
// on the freeing thread, in a table per power-of-two size, and handed to the next operation of
// that size class; smaller ones come from ::operator new, which serves them from its own caches.
//
// Invariants:
//   * Only the owning thread touches its cache (thread_local; no synchronisation). An operation,
//     and so its buffer, is created and freed on the thread of its loop (io_op.hpp); a buffer
//     freed on another thread joins that thread's cache, never a second list.
//   * A thread keeps at most `staging_cache_max_bytes` of free buffers, and at most
//     `staging_cache_max_per_class` of one class; a free beyond either goes to ::operator delete.
//     At thread exit the cache is emptied, and frees after that bypass it.
//   * Under AddressSanitizer or ThreadSanitizer every buffer comes from ::operator new and goes
//     back to ::operator delete (recycler_enabled), so a use after free stays visible.
//   * A buffer of a class holds the class's full size; the operation still hands the kernel only
//     the bytes it asked for.
//
// The simulator's fibers share one OS thread and so one cache; addresses never steer scheduling
// or enter a trace, and no seam operation runs inside the cache, so nothing here is observable.
#pragma once

#include <cstddef>

namespace weft::detail {

// Buffers smaller than this come from ::operator new directly (glibc serves up to about 1 KiB
// from its per-thread cache).
inline constexpr std::size_t staging_cache_min_block = 2048;
// The largest class: io_staging_max (io_op.hpp) caps every operation's staging at this.
inline constexpr std::size_t staging_cache_max_block = 256 * 1024;
// At most this many bytes of free staging buffers are kept per thread...
inline constexpr std::size_t staging_cache_max_bytes = std::size_t{1} << 20;
// ...and at most this many of one size class (a loop reuses a few buffers at a time; the bound
// keeps the per-thread table of free buffers small).
inline constexpr unsigned staging_cache_max_per_class = 32;

// One operation's staging bytes: at least the size asked for, or none for a size of zero.
class staging_buffer {
 public:
  explicit staging_buffer(std::size_t size);
  // An operation's buffer stays where the kernel was told it is: never copied or moved.
  staging_buffer(const staging_buffer&) = delete;
  staging_buffer& operator=(const staging_buffer&) = delete;
  ~staging_buffer();

  std::byte* get() const noexcept { return bytes_; }
  // What the block holds: the size asked for, rounded up to its class.
  std::size_t capacity() const noexcept { return capacity_; }

  // Bytes of free staging buffers the calling thread keeps (for tests).
  static std::size_t cached_bytes() noexcept;

 private:
  std::byte* bytes_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace weft::detail
