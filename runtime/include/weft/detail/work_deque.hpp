// weft/detail/work_deque.hpp — a worker's local run queue in the work-stealing pool: a bounded ring
// of `T*` that one thread (the owner) fills and takes from in FIFO order while other workers
// (thieves) take batches of its oldest items.
//
// Who may call what:
//   push, pop, pop_half        the owner only (one thread at a time, the one that pushes);
//   steal_half_into(dst)       any thread that owns `dst`, never the owner of the victim;
//   size_approx, empty_approx  any thread (a racy snapshot).
// Items are not owned: the deque stores pointers and never dereferences them.
//
// Layout. `head_` and `tail_` are 32-bit logical indices that only grow and wrap around 2^32;
// item `i` lives in `slots_[i % Capacity]`. Every comparison is a difference (`tail - head`), so
// the wrap of the counters is invisible; the items are [head, tail).
//   tail_  one past the newest item; written only by the owner (push), read by thieves;
//   head_  the oldest item; moved forward by a CAS, by the owner (pop, pop_half) and by thieves;
//   slots  written only by the owner of the ring (a thief writes the slots of its own `dst`),
//          every access relaxed: tail_ publishes them, head_ retires them.
//   hints_ per slot, the item pushed there and the memory its consumer reads first (plain
//          memory, touched only by the ring's owner: push and pop, and a thief for its `dst`).
//          pop() prefetches the next item's entry while the popped item runs: the items of a
//          busy pool are many and cold, and their cells and frames are scattered. A hint is
//          advice: an item stolen since its push makes it point at memory that may be freed,
//          which a prefetch never reads.
//
// Invariants:
//   * 0 <= tail - head <= Capacity at every point of head_'s and tail_'s histories;
//   * an item is taken by exactly one CAS: a taker reads the slots [h, h + k) *before* its CAS
//     from h to h + k, and uses what it read only when that CAS succeeded;
//   * a slot is reused only after every taker that may still use its old content is done reading
//     it. push() writes item t into the slot of item t - Capacity only when it loaded a head
//     h_seen > t - Capacity (the room check), with acquire. A thief whose CAS from some h <= t -
//     Capacity then succeeds is impossible: head never goes back, so that CAS came before h_seen
//     in head_'s history, and its release (paired with push's acquire) orders the thief's slot
//     read before the owner's overwrite — it read the old item. A thief still reading when the
//     slot is overwritten fails its CAS (head already moved past h) and discards what it read.
//     The same holds for the slots a thief fills in its own `dst` before publishing them.
//   * a thief that read `h` from head_ (acquire) then reads a tail >= h: whoever stored h knew a
//     tail >= h and released it with the CAS. So `tail - h` never underflows; it exceeds Capacity
//     only when `h` is stale, and then the CAS fails anyway (the thief reloads).
// A thief stalled between its head load and its CAS for 2^32 takes could see its CAS succeed
// against a wrapped head (ABA); 2^32 items go through a worker long after any steal finishes.
//
// The Relacy model `work_deque` (docs/models.md) checks that every item is taken exactly once and
// that a taker sees what was written to the item before its push, with known-bad twins.
//
// Steals are best effort: a thief may see a victim empty while the owner pushes, or give up when
// the victim's head moves. The pool must not rely on a steal to find every item.
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

inline constexpr std::uint32_t work_deque_capacity = 256;  // per worker and priority

template <class T, std::uint32_t Capacity = work_deque_capacity>
class work_deque {
  static_assert(Capacity >= 2, "a ring of one cannot be split in halves");
  static_assert((Capacity & (Capacity - 1)) == 0, "Capacity must be a power of two (index % Capacity)");
  static_assert(Capacity <= (std::uint32_t{1} << 31), "tail - head must fit the 32-bit index");

 public:
  // pop_half() writes at most Capacity / 2 items; the caller's buffer also holds the item whose
  // push failed, which goes with the batch.
  static constexpr std::size_t pop_half_out_min = Capacity / 2 + 1;

  work_deque() noexcept = default;
  // Starts the indices at `first_index` (the ring is empty): lets tests put the 32-bit wrap of
  // head and tail within a few pushes.
  explicit work_deque(std::uint32_t first_index) noexcept : head_(first_index), tail_(first_index) {}
  work_deque(const work_deque&) = delete;
  work_deque& operator=(const work_deque&) = delete;

  // Owner. Appends at the tail; false (nothing changed) when the ring is full. `first_touch`
  // (optional) is memory the item's consumer reads first: pop() prefetches it, and the item,
  // while the item before it runs.
  bool push(T* item, const void* first_touch = nullptr) noexcept {
    WEFT_ASSERT(item != nullptr);
    // relaxed: only this thread stores tail_.
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    // acquire: pairs with the release CAS of the taker that moved head here, so its reads of the
    // slots it took are done before we reuse one (see the head comment).
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    WEFT_ASSERT(t - h <= Capacity);
    if (t - h >= Capacity) return false;
    hints_[t & (Capacity - 1)] = prefetch_hint{item, first_touch};
    // relaxed: published by the tail store below.
    slot(t).store(item, std::memory_order_relaxed);
    // release: pairs with the thieves' acquire load of tail_, which then see this slot and
    // everything written to the item before the push.
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  // Owner. Takes the oldest item (FIFO), or null when empty. Races thieves through a CAS on head.
  T* pop() noexcept {
    // relaxed: only this thread stores tail_.
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    // relaxed: the CAS below checks it; the slots were written by this thread.
    std::uint32_t h = head_.load(std::memory_order_relaxed);
    for (;;) {
      WEFT_ASSERT(t - h <= Capacity);
      if (t == h) return nullptr;
      // relaxed: this thread wrote the slot; only a successful CAS makes the item ours.
      T* const item = slot(h).load(std::memory_order_relaxed);
      // release: pairs with the thieves' acquire loads of head_ (they then see a tail >= h + 1).
      // relaxed on failure: `h` is only retried, and the CAS checks it again.
      if (head_.compare_exchange_strong(h, h + 1, std::memory_order_release, std::memory_order_relaxed)) {
        if (t != h + 1) prefetch(h + 1);
        return item;
      }
    }
  }

  // Owner, when push() failed: takes the oldest ceil(n / 2) items (n = current size) into
  // out[0, k), oldest first, and returns k (0 when empty). `max_out` >= pop_half_out_min.
  std::size_t pop_half(T** out, std::size_t max_out) noexcept {
    WEFT_ASSERT(out != nullptr);
    WEFT_ASSERT(max_out >= pop_half_out_min);
    // relaxed: only this thread stores tail_.
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    // relaxed: as in pop().
    std::uint32_t h = head_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t n = t - h;
      WEFT_ASSERT(n <= Capacity);
      const std::uint32_t k = n - n / 2;
      if (k == 0) return 0;
      // relaxed: this thread wrote the slots; they are ours only if the CAS succeeds.
      for (std::uint32_t i = 0; i < k; ++i) out[i] = slot(h + i).load(std::memory_order_relaxed);
      // release / relaxed: as in pop().
      if (head_.compare_exchange_strong(h, h + k, std::memory_order_release, std::memory_order_relaxed)) {
        return k;
      }
    }
  }

  // A thread that owns `dst` (never the owner of *this). Moves ceil(n / 2) of this ring's oldest
  // items (n = its size; fewer when dst has less room) out of it and returns the OLDEST of them,
  // for the caller to run at once; the others are appended to dst, oldest first, so the batch
  // keeps its order. Null when there was nothing to take (or the race for it was lost to the
  // owner emptying the ring).
  T* steal_half_into(work_deque& dst) noexcept {
    WEFT_ASSERT(&dst != this);
    // relaxed: the caller owns dst, so only this thread stores dst.tail_.
    const std::uint32_t dst_t = dst.tail_.load(std::memory_order_relaxed);
    // acquire: as in push(): dst's takers are done reading the slots we are about to fill.
    const std::uint32_t dst_h = dst.head_.load(std::memory_order_acquire);
    WEFT_ASSERT(dst_t - dst_h <= Capacity);
    const std::uint32_t dst_room = Capacity - (dst_t - dst_h);
    // acquire: pairs with the release CAS that stored this head (pop, pop_half, another steal),
    // so the tail load below is >= h (see the head comment).
    std::uint32_t h = head_.load(std::memory_order_acquire);
    for (;;) {
      // acquire: pairs with the release store in push(): the slots [h, t) and the items they
      // point to are visible.
      const std::uint32_t t = tail_.load(std::memory_order_acquire);
      const std::uint32_t n = t - h;
      if (n == 0) return nullptr;
      if (n > Capacity) {  // `h` is stale (the head moved on): the CAS would fail
        // acquire: as above.
        h = head_.load(std::memory_order_acquire);
        continue;
      }
      std::uint32_t k = n - n / 2;
      if (k > dst_room + 1) k = dst_room + 1;  // one of the batch is returned, not stored
      // relaxed: published by the tail_ acquire above; used only if the CAS succeeds. dst's slots
      // past its tail are invisible to dst's thieves until the release store of dst.tail_ below.
      T* const first = slot(h).load(std::memory_order_relaxed);
      for (std::uint32_t i = 1; i < k; ++i) {
        T* const item = slot(h + i).load(std::memory_order_relaxed);
        dst.slot(dst_t + i - 1).store(item, std::memory_order_relaxed);
        dst.hints_[(dst_t + i - 1) & (Capacity - 1)] = prefetch_hint{item, nullptr};  // dst's owner: us
      }
      // release: pairs with push()'s acquire load of head_ (our slot reads are done before the
      // owner reuses those slots) and with other thieves' acquire loads of head_ (the tail we
      // saw, >= h + k, is visible to them). acquire on failure: the new `h` is the loop's next
      // head, loaded as the one before the loop.
      if (head_.compare_exchange_strong(h, h + k, std::memory_order_release, std::memory_order_acquire)) {
        if (k > 1) {
          // release: pairs with the acquire load of dst.tail_ by dst's thieves.
          dst.tail_.store(dst_t + (k - 1), std::memory_order_release);
        }
        WEFT_ASSERT(first != nullptr);
        return first;
      }
    }
  }

  // Any thread. Approximate number of items: exact for the owner when no thief races it.
  std::size_t size_approx() const noexcept {
    // acquire / acquire: as in steal_half_into(), so tail - head never underflows.
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    const std::uint32_t t = tail_.load(std::memory_order_acquire);
    const std::uint32_t n = t - h;
    // A stale head (moved on since we loaded it) can make the difference exceed the ring; the
    // ring never holds more than Capacity.
    return n > Capacity ? Capacity : n;
  }

  bool empty_approx() const noexcept { return size_approx() == 0; }

 private:
  sync::atomic<T*>& slot(std::uint32_t index) noexcept { return slots_[index & (Capacity - 1)]; }

  sync::atomic<std::uint32_t> head_{0};  // oldest item; CAS by the owner and by thieves
  sync::atomic<std::uint32_t> tail_{0};  // one past the newest item; stored by the owner only
  sync::atomic<T*> slots_[Capacity];
  // Owner only: what push() recorded for each slot, read by pop() to prefetch the next item. Plain
  // memory no other thread touches; a hint whose item was stolen (and maybe run and freed since)
  // costs a useless prefetch, never a read.
  struct prefetch_hint {
    const void* item = nullptr;
    const void* first_touch = nullptr;
  };
  prefetch_hint hints_[Capacity];
  void prefetch(std::uint32_t index) const noexcept {
    const prefetch_hint& h = hints_[index & (Capacity - 1)];
    __builtin_prefetch(h.item);
    __builtin_prefetch(h.first_touch);
  }
};

}  // namespace weft::detail
