// seed_range.hpp — the seeds one fuzz shard runs, computed on demand.
//
// `fuzz --seeds N --start S --shard i/n` runs seed S + k for every k in [0, N) with k % n == i.
// The j-th of them is S + i + j * n: a worker asks for an index and gets its seed, so memory does
// not grow with N (--seeds 100000000 holds four integers, not a vector of seeds).
#pragma once

#include <cstdint>

#include <weft/platform/assert.hpp>

namespace weft::sim {

class seed_range {
 public:
  // Preconditions (the CLI checks them on its flags): count >= 1, start + count - 1 does not
  // overflow, shard < shards.
  seed_range(std::uint64_t start, std::uint64_t count, std::uint64_t shard, std::uint64_t shards)
      : start_(start), count_(count), shard_(shard), shards_(shards) {
    WEFT_ASSERT(count >= 1 && shards >= 1 && shard < shards);
    WEFT_ASSERT(count - 1 <= ~std::uint64_t{0} - start);
  }

  // How many seeds this shard runs.
  std::uint64_t size() const noexcept { return count_ > shard_ ? (count_ - shard_ - 1) / shards_ + 1 : 0; }
  // The j-th seed of this shard, j < size(). j * shards_ <= count_ - 1 - shard_: no overflow.
  std::uint64_t at(std::uint64_t j) const noexcept {
    WEFT_ASSERT(j < size());
    return start_ + shard_ + j * shards_;
  }
  std::uint64_t first() const noexcept { return start_; }
  std::uint64_t last() const noexcept { return start_ + (count_ - 1); }
  std::uint64_t shard() const noexcept { return shard_; }
  std::uint64_t shards() const noexcept { return shards_; }

 private:
  std::uint64_t start_;
  std::uint64_t count_;
  std::uint64_t shard_;
  std::uint64_t shards_;
};

}  // namespace weft::sim
