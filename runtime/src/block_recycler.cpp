// block_recycler.cpp — the thread-exit cleanup of a thread's block cache (block_recycler.hpp).
#include <weft/detail/block_recycler.hpp>

namespace weft::detail {

// One per thread that cached a block: at thread exit, returns every cached block to
// ::operator delete and closes the cache, so frees after this point bypass it.
struct block_recycler_cleanup {
  ~block_recycler_cleanup() {
    block_recycler::cache& c = block_recycler::cache_;
    for (std::size_t k = 0; k < block_recycler::class_count; ++k) {
      while (block_recycler::free_block* b = c.heads[k]) {
        c.heads[k] = b->next;
        release_block(b, block_recycler::block_size(k));
      }
    }
    c.bytes = 0;
    c.state = block_recycler::phase::closed;
  }
};

void block_recycler::open_cache() noexcept {
  // Constructed the first time this thread gets here; destroyed at its exit.
  static thread_local block_recycler_cleanup cleanup;  // seam-ok: see block_recycler.hpp
  (void)cleanup;
  cache_.state = phase::open;
}

}  // namespace weft::detail
