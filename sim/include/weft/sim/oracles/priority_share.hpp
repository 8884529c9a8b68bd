// weft/sim/oracles/priority_share.hpp — weighted opportunities in a stealing_pool: every priority
// keeps making progress while higher ones are busy, in about the share its weight gives it.
//
// The scenario keeps all three levels saturated (tasks that yield many times) and reports every
// poll of such a task with its level and whether every level had work queued at that moment
// (polled; the pool's stats say what is queued), when every task has been made runnable
// (open_window), and each level whose last task ended (level_done). The window is the polls made
// between open_window and the first level_done while every level had work queued. (A level can
// have tasks and none queued: a worker descheduled in the middle of a steal holds the batch it
// took until it runs again; opportunities then go to the levels that have work.)
// In it, each level must get at least half its weighted share (window * weight / total / 2),
// less a slack of one poll per worker (a worker whose queues hold no work of the chosen level
// gives that opportunity to another). A window shorter than two selector cycles is too short to
// judge and is skipped (noted).
#pragma once

#include <weft/compiler_support.hpp>

#include <array>
#include <cstdint>
#include <string>

#include <weft/priority.hpp>
#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class priority_share_ledger {
 public:
  priority_share_ledger(context& sim, std::array<std::uint32_t, priority_count> weights, std::uint64_t workers)
      : sim_(sim), weights_(weights), workers_(workers) {}

  void open_window() {
    if (!window_closed_) window_open_ = true;
  }
  void polled(priority p, bool every_level_queued) {
    if (!window_open_ || !every_level_queued) return;
    ++polls_[index_of(p)];
  }
  void level_done(priority p) {
    window_closed_ = true;
    if (!window_open_) return;
    window_open_ = false;
    sim_.note(std::string("priority-share oracle: the window closes as ") + to_string(p) + " runs out of work");
  }

  // Returns true when the shares held (or the window was too short to judge).
  bool check() {
    std::uint64_t window = 0;
    std::uint64_t total_weight = 0;
    for (std::size_t p = 0; p < priority_count; ++p) {
      window += polls_[p];
      total_weight += weights_[p];
    }
    if (window < 2 * total_weight) {
      sim_.note("priority-share oracle: window of " + std::to_string(window) + " polls, too short to judge");
      return true;
    }
    bool ok = true;
    for (std::size_t p = 0; p < priority_count; ++p) {
      const std::uint64_t half_share = window * weights_[p] / total_weight / 2;
      const std::uint64_t floor = half_share > workers_ ? half_share - workers_ : 0;
      if (polls_[p] < floor) {
        ok = false;
        sim_.fail("priority-share oracle: " + std::string(to_string(static_cast<priority>(p))) + " got " +
                  std::to_string(polls_[p]) + " of " + std::to_string(window) +
                  " polls while every level had work; its weight gives it at least " + std::to_string(floor));
      }
    }
    return ok;
  }

  std::uint64_t window() const noexcept { return polls_[0] + polls_[1] + polls_[2]; }

 private:
  context& sim_;
  std::array<std::uint32_t, priority_count> weights_;
  std::uint64_t workers_;
  std::array<std::uint64_t, priority_count> polls_{};
  bool window_open_ = false;
  bool window_closed_ = false;
};

}  // namespace weft::sim::oracles
