// strategy.cpp — the random and PCT strategies (see strategy.hpp).
#include <algorithm>
#include <utility>

#include <weft/platform/assert.hpp>
#include <weft/sim/engine.hpp>
#include <weft/sim/strategy.hpp>

namespace weft::sim {

namespace {

class random_strategy final : public strategy {
 public:
  explicit random_strategy(platform::random& rng) : rng_(rng) {}
  void on_spawn(detail::fiber_record&) override {}
  void on_step(std::uint64_t, detail::fiber_record&) override {}
  std::size_t choose(const std::vector<detail::fiber_record*>& ready, detail::fiber_record* current) override {
    const std::size_t candidates = ready.size() + (current != nullptr ? 1 : 0);
    WEFT_ASSERT(candidates > 0);
    return static_cast<std::size_t>(rng_.below(candidates));
  }

 private:
  platform::random& rng_;
};

class pct_strategy final : public strategy {
 public:
  pct_strategy(const options& o, platform::random& rng) : rng_(rng), depth_(std::max<std::uint32_t>(o.pct_depth, 1)) {
    const std::uint64_t range = std::max<std::uint64_t>(o.pct_steps, 1);
    for (std::uint32_t i = 1; i < depth_; ++i) {
      change_points_.push_back({1 + rng_.below(range), i});
    }
    // Sorted by step (ties keep draw order), consumed front to back.
    std::stable_sort(change_points_.begin(), change_points_.end(),
                     [](const change_point& a, const change_point& b) { return a.step < b.step; });
  }
  void on_spawn(detail::fiber_record& f) override {
    // Above every change-point priority (1 .. d-1); 2^56 values make ties vanishingly rare, and a
    // tie is still broken deterministically (first candidate wins).
    f.priority = depth_ + (rng_.next() >> 8);
  }
  void on_step(std::uint64_t step, detail::fiber_record& current) override {
    while (next_ < change_points_.size() && change_points_[next_].step <= step) {
      current.priority = change_points_[next_].priority;
      ++next_;
    }
  }
  std::size_t choose(const std::vector<detail::fiber_record*>& ready, detail::fiber_record* current) override {
    std::size_t best = ready.size();
    std::uint64_t best_priority = current != nullptr ? current->priority : 0;
    bool have = current != nullptr;
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (!have || ready[i]->priority > best_priority) {
        best = i;
        best_priority = ready[i]->priority;
        have = true;
      }
    }
    WEFT_ASSERT(have);
    return best;
  }

 private:
  struct change_point {
    std::uint64_t step;
    std::uint64_t priority;
  };
  platform::random& rng_;
  std::uint32_t depth_;
  std::vector<change_point> change_points_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<strategy> make_strategy(const options& o, platform::random& rng) {
  switch (o.strategy) {
    case strategy_kind::random: return std::make_unique<random_strategy>(rng);
    case strategy_kind::pct: return std::make_unique<pct_strategy>(o, rng);
  }
  return std::make_unique<random_strategy>(rng);
}

}  // namespace weft::sim
