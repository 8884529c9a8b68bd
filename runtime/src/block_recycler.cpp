// block_recycler.cpp — the thread-exit cleanup of a thread's block cache, and the depot that
// moves chains of blocks between threads' caches (block_recycler.hpp).
#include <weft/detail/block_recycler.hpp>

#include <atomic>
#include <mutex>

namespace weft::detail {

namespace {

// The chains of free blocks that threads with full caches handed over, per class. A chain is
// recycler_chain_blocks blocks linked through free_block::next; chains are linked through the
// second word of their first block (every class's block holds two pointers).
struct chain_link {
  void* next_in_chain;
  chain_link* next_chain;
};
static_assert(sizeof(chain_link) <= block_recycler::block_size(0));

class recycler_depot {
 public:
  // Pushes a chain of class k; false (nothing taken) when the depot is full.
  bool give(std::size_t k, void* chain, std::size_t chain_bytes) noexcept {
    const std::lock_guard<std::mutex> hold(lock_);
    // relaxed: under lock_, which orders every change of the count; has_room() only estimates.
    const std::size_t bytes = bytes_.load(std::memory_order_relaxed);
    if (bytes + chain_bytes > recycler_depot_max_bytes) return false;
    auto* link = static_cast<chain_link*>(chain);
    link->next_chain = chains_[k];
    chains_[k] = link;
    bytes_.store(bytes + chain_bytes, std::memory_order_relaxed);  // relaxed: as above
    // relaxed: a hint for take()'s lock-free check; the lock orders the chain itself.
    available_[k].fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // Whether a chain of `chain_bytes` would probably fit: a full depot is told without the lock,
  // before a spilling thread walks its list to cut a chain off. A stale answer costs a walk or
  // one block more for malloc, never a block.
  bool has_room(std::size_t chain_bytes) const noexcept {
    // relaxed: a hint, see above.
    return bytes_.load(std::memory_order_relaxed) + chain_bytes <= recycler_depot_max_bytes;
  }
  // Pops a chain of class k, or null.
  void* take(std::size_t k, std::size_t chain_bytes) noexcept {
    // relaxed: only saves the lock when there is surely nothing; a stale answer costs a malloc
    // or a lock, never a block.
    if (available_[k].load(std::memory_order_relaxed) == 0) return nullptr;
    const std::lock_guard<std::mutex> hold(lock_);
    chain_link* link = chains_[k];
    if (link == nullptr) return nullptr;
    chains_[k] = link->next_chain;
    // relaxed: as in give().
    bytes_.store(bytes_.load(std::memory_order_relaxed) - chain_bytes, std::memory_order_relaxed);
    // relaxed: as in give().
    available_[k].fetch_sub(1, std::memory_order_relaxed);
    return link;
  }

 private:
  // A plain mutex and atomic, not the seam's: see the head of block_recycler.hpp.
  std::mutex lock_;                                                   // seam-ok: see above
  chain_link* chains_[block_recycler::class_count] = {};              // under lock_
  std::atomic<std::size_t> bytes_{0};  // seam-ok: changed under lock_, estimated without it
  std::atomic<std::uint32_t> available_[block_recycler::class_count] = {};  // seam-ok: chains per class
};

// Never destroyed: threads may free blocks during static destruction.
constinit recycler_depot depot;  // seam-ok: an allocation cache, see block_recycler.hpp

}  // namespace

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
      c.counts[k] = 0;
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

block_recycler::free_block* block_recycler::refill_from_depot(std::size_t k) noexcept {
  cache& c = cache_;
  const std::size_t chain_bytes = recycler_chain_blocks * block_size(k);
  if (c.state == phase::closed || c.bytes + chain_bytes > recycler_max_cached_bytes) return nullptr;
  void* chain = depot.take(k, chain_bytes);
  if (chain == nullptr) return nullptr;
  if (c.state == phase::unused) open_cache();  // the chain must go back to malloc at thread exit
  c.heads[k] = static_cast<free_block*>(chain);
  c.counts[k] = recycler_chain_blocks;
  c.bytes += chain_bytes;
  return c.heads[k];
}

bool block_recycler::spill_to_depot(std::size_t k) noexcept {
  cache& c = cache_;
  const std::size_t chain_bytes = recycler_chain_blocks * block_size(k);
  // The chain is cut off by walking the list through blocks not touched since they were freed:
  // not when the depot would refuse it anyway.
  if (c.counts[k] < recycler_chain_blocks || !depot.has_room(chain_bytes)) return false;
  free_block* first = c.heads[k];
  free_block* last = first;
  for (std::uint32_t i = 1; i < recycler_chain_blocks; ++i) last = last->next;
  free_block* rest = last->next;
  last->next = nullptr;
  if (!depot.give(k, first, chain_bytes)) {
    last->next = rest;  // the depot is full: the cache keeps the chain
    return false;
  }
  c.heads[k] = rest;
  c.counts[k] -= recycler_chain_blocks;
  c.bytes -= chain_bytes;
  return true;
}

}  // namespace weft::detail
