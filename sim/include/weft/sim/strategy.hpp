// weft/sim/strategy.hpp — who runs next, decided from the seed alone.
//
// At every scheduling choice the engine hands the strategy the ready fibers (in arrival order)
// and, at a yield point, the fiber that is running (it may simply go on). The answer is an index
// into `ready`, or ready.size() for "the current fiber goes on".
//
//   random  uniform over all candidates.
//   pct     Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding
//           Bugs" (ASPLOS 2010): each fiber gets a random priority at creation (all above d);
//           d - 1 change points are drawn uniformly from steps [1, k]; when the running fiber
//           passes the i-th change point its priority drops to i. The highest-priority candidate
//           always runs. A bug of depth d is found with probability >= 1 / (n * k^(d-1)).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <weft/platform/random.hpp>
#include <weft/sim/options.hpp>

namespace weft::sim {

namespace detail {
struct fiber_record;
}

class strategy {
 public:
  virtual ~strategy() = default;
  virtual void on_spawn(detail::fiber_record& f) = 0;
  virtual void on_step(std::uint64_t step, detail::fiber_record& current) = 0;
  // `current` is null when the running fiber is not a candidate (it blocked, exited, or asked to
  // let others go first).
  virtual std::size_t choose(const std::vector<detail::fiber_record*>& ready,
                             detail::fiber_record* current) = 0;
};

std::unique_ptr<strategy> make_strategy(const options& o, platform::random& rng);

}  // namespace weft::sim
