// weft/detail/block_recycler.hpp — per-thread free lists for the small blocks every task needs
// (its cell and its coroutine frames).
//
// A spawn allocates a cell and a frame and a completion frees both; with a general-purpose
// allocator that is about a third of the instructions of a spawn + join. Freed blocks are kept on
// the freeing thread, in a singly linked list per 16-byte size class, and handed out again by
// the next allocation of that class on that thread, whichever thread allocated it.
//
// Blocks can flow one way between threads: on a stealing pool, a task spawned on one worker often
// completes, and is freed, on another. The freeing thread's cache then fills while the
// allocating thread's runs dry, and both would fall back to malloc. So a thread whose cache is
// full hands a chain of `recycler_chain_blocks` blocks of the class it frees to a process-wide
// depot, and a thread with no block of a class takes a chain of it from there before it asks
// malloc. One lock per chain, not per block; the depot is bounded too, and beyond it blocks go
// to ::operator delete.
//
// Invariants:
//   * Only the owning thread touches its cache (thread_local; no synchronisation). The depot's
//     chains are touched under its lock only; a chain's blocks belong to nobody while in it.
//   * A thread caches at most `recycler_max_cached_bytes`, the depot at most
//     `recycler_depot_max_bytes`; a free that fits neither goes to ::operator delete. At thread
//     exit the cache is emptied into ::operator delete, and frees after that (from later
//     thread_local destructors) bypass it.
//   * Blocks are recycled only under a normal build: under AddressSanitizer or ThreadSanitizer
//     every block goes straight to ::operator new/delete, so those tools see each task's memory
//     come and go (a recycled block would hide a use after free from ASan).
//   * Sizes are exact on both sides: callers pass the size they allocated (sized delete), so the
//     size class of a freed block is known without a header.
//
// Nothing here can leak nondeterminism into the simulator: block addresses never steer
// scheduling or enter a trace (see docs/seam.md); the simulator's fibers share one OS thread and
// so one cache, touched only between yield points. The depot's lock is a plain std::mutex for the
// same reason: no seam operation, so no scheduling point, happens while it is held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace weft::detail {

// The largest block kept (a bigger one always goes to ::operator new/delete).
inline constexpr std::size_t recycler_max_block = 512;
// Size classes are this far apart...
inline constexpr std::size_t recycler_granularity = 16;
// ...and offset by the general allocator's per-block header (glibc malloc: 8 bytes before each
// block, blocks in 16-byte steps), so a class's block size is exactly a malloc block's usable
// size (24, 40, 56, 72, ...): recycling rounds a request up no further than malloc itself would.
inline constexpr std::size_t recycler_allocator_header = 8;
// At most this many bytes of free blocks are kept per thread.
inline constexpr std::size_t recycler_max_cached_bytes = std::size_t{1} << 20;
// Blocks per chain moved between a thread's cache and the depot (one lock per chain).
inline constexpr std::uint32_t recycler_chain_blocks = 32;
// At most this many bytes of free blocks wait in the depot, all classes together.
inline constexpr std::size_t recycler_depot_max_bytes = std::size_t{4} << 20;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool recycler_enabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool recycler_enabled = false;
#else
inline constexpr bool recycler_enabled = true;
#endif
#else
inline constexpr bool recycler_enabled = true;
#endif

// Returns a block to the general allocator with its size where the compiler has sized
// deallocation (clang enables it only with -fsized-deallocation; consumers need no such flag).
inline void release_block(void* p, [[maybe_unused]] std::size_t size) noexcept {
#if defined(__cpp_sized_deallocation)
  ::operator delete(p, size);
#else
  ::operator delete(p);
#endif
}

class block_recycler {
 public:
  static constexpr std::size_t class_count = recycler_max_block / recycler_granularity + 1;

  static void* allocate(std::size_t size) {
    if constexpr (recycler_enabled) {
      if (size <= recycler_max_block && size > 0) {
        cache& c = cache_;
        const std::size_t k = class_of(size);
        free_block* b = c.heads[k];
        if (b == nullptr) b = refill_from_depot(k);
        if (b != nullptr) {
          c.heads[k] = b->next;
          // The next allocation of this class reads the new head's link first; a block freed on
          // another thread (a depot chain) is cold, so its line is fetched now, off that path.
          __builtin_prefetch(b->next, 1);
          --c.counts[k];
          c.bytes -= block_size(k);
          return b;
        }
        return ::operator new(block_size(k));  // the class's size, so it can serve the class later
      }
    }
    return ::operator new(size);
  }

  static void deallocate(void* p, std::size_t size) noexcept {
    if constexpr (recycler_enabled) {
      if (size <= recycler_max_block && size > 0) {
        cache& c = cache_;
        const std::size_t k = class_of(size);
        if (c.state == phase::open &&
            (c.bytes + block_size(k) <= recycler_max_cached_bytes || spill_to_depot(k))) {
          auto* b = static_cast<free_block*>(p);
          b->next = c.heads[k];
          c.heads[k] = b;
          ++c.counts[k];
          c.bytes += block_size(k);
          return;
        }
        if (c.state == phase::unused) {
          open_cache();  // first cached block of this thread: arrange the cleanup at exit
          deallocate(p, size);
          return;
        }
        release_block(p, block_size(k));
        return;
      }
    }
    release_block(p, size);
  }

  // Class k holds blocks of block_size(k) bytes and serves requests in (block_size(k-1), block_size(k)].
  static constexpr std::size_t class_of(std::size_t size) noexcept {
    const std::size_t chunk = (size + recycler_allocator_header + recycler_granularity - 1) / recycler_granularity;
    return chunk < 2 ? 0 : chunk - 2;
  }
  static constexpr std::size_t block_size(std::size_t k) noexcept {
    return (k + 2) * recycler_granularity - recycler_allocator_header;
  }

  // Bytes of free blocks the calling thread holds (for tests).
  static std::size_t cached_bytes() noexcept { return cache_.bytes; }

 private:
  struct free_block {
    free_block* next;
  };
  enum class phase : std::uint8_t { unused, open, closed };
  struct cache {
    free_block* heads[class_count];
    std::uint32_t counts[class_count];  // blocks on each list
    std::size_t bytes;
    phase state;
  };

  // Out of line (block_recycler.cpp). The calling thread has no block of class k: takes a chain
  // of them from the depot into its cache and returns one block of it (still linked in first
  // place), or null (the depot has none, or they would not fit the cache).
  static free_block* refill_from_depot(std::size_t k) noexcept;
  // The calling thread's cache is full: hands a chain of class k, if it holds one, to the depot.
  // True when that made room for one more block.
  static bool spill_to_depot(std::size_t k) noexcept;

  // Out of line (block_recycler.cpp): registers the thread-exit cleanup, then marks the cache open.
  static void open_cache() noexcept;
  friend struct block_recycler_cleanup;

  // Constant-initialised and trivially destructible: no guard on the hot path. A plain
  // thread_local, not a platform::thread_slot, on purpose: in the simulator every fiber shares this
  // OS thread's cache, which is harmless — the cache holds no state any simulated thread can
  // observe, and no seam operation (so no scheduling point) happens inside allocate/deallocate.
  static inline thread_local constinit cache cache_{};  // seam-ok: an allocation cache, see above

};

static_assert(block_recycler::block_size(block_recycler::class_of(1)) >= 1);
static_assert(block_recycler::block_size(block_recycler::class_of(recycler_max_block)) >= recycler_max_block);
static_assert(block_recycler::class_of(recycler_max_block) < block_recycler::class_count);
static_assert(block_recycler::block_size(block_recycler::class_of(72)) == 72);
static_assert(block_recycler::block_size(block_recycler::class_of(73)) == 88);

}  // namespace weft::detail
