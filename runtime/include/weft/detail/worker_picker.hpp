// weft/detail/worker_picker.hpp — which worker a spawn that names none (spawn_anywhere) lands on.
//
// An idle worker that is awake, on another CPU than the caller's, first: the task starts at once
// and no system call wakes anyone. In order:
//   1. the worker the last pick chose, when it is spinning idle, or when it is running, nobody
//      has notified it since it last waited, and the calling thread's last blocking join took the
//      output of a task that ran there (its work for the caller is done: it is about to idle);
//   2. the first of the next few workers that is spinning idle;
//   3. round robin, which spreads a burst over busy (or sleeping) workers as a function of
//      submission order alone.
// Rules 1 and 2 skip a worker that last waited on the caller's own CPU: the two would take turns
// on that CPU through the scheduler (a yield each way) while another CPU may be free.
//
// Asking the last chosen worker first concentrates a trickle of spawns (a thread that spawns one
// task and joins it, again and again) on one worker; the other workers' spins run out and they
// sleep, leaving the cores to the threads that have work. The simulator's drivers report no
// activity (owner_activity::other), so its placement is exactly round robin.
//
// Any thread may pick. Everything read here is a hint: a stale read places a task on a busy or
// sleeping worker, which runs it all the same.
#pragma once

#include <algorithm>
#include <cstddef>

#include <weft/platform/assert.hpp>
#include <weft/platform/owner_activity.hpp>
#include <weft/platform/sync.hpp>

namespace weft::detail {

// How many workers one pick asks whether they are spinning idle: each question reads another
// worker's driver state, so a pick on a many-worker runtime stays a few loads.
inline constexpr std::size_t worker_pick_probes = 4;

class worker_picker {
 public:
  // One of workers 0..workers-1 (workers >= 1, the same on every call). `view` answers, for a
  // worker w: activity(w), what its loop thread is doing (platform::driver::activity);
  // on_caller_cpu(w), it last waited on the CPU the caller runs on; joined_from(w), the caller's
  // last blocking join took the output of a task that ran on w.
  template <class View>
  std::size_t pick(std::size_t workers, const View& view) noexcept {
    // relaxed (both counters): only the spread matters, no data is published through them.
    const std::size_t last = last_.load(std::memory_order_relaxed);
    WEFT_ASSERT(last < workers);  // only remember() stores it, a worker's index
    const platform::owner_activity now = view.activity(last);
    if ((now == platform::owner_activity::spinning ||
         (now == platform::owner_activity::running && view.joined_from(last))) &&
        !view.on_caller_cpu(last)) {
      return last;
    }
    const std::size_t probes = std::min(workers, worker_pick_probes);
    // The indices wrap by comparison, not `%`: a division per probe was a visible share of a
    // spawn in a burst.
    for (std::size_t i = 1, w = last; i < probes; ++i) {
      w = w + 1 == workers ? 0 : w + 1;
      if (view.activity(w) == platform::owner_activity::spinning && !view.on_caller_cpu(w)) {
        return remember(last, w);
      }
    }
    return remember(last, next_.fetch_add(1, std::memory_order_relaxed) % workers);
  }

 private:
  // Stores only a change: a steady stream of picks of one worker leaves the line shared.
  std::size_t remember(std::size_t last, std::size_t w) noexcept {
    if (w != last) last_.store(w, std::memory_order_relaxed);
    return w;
  }

  sync::atomic<std::size_t> last_{0};  // the worker the last pick chose
  sync::atomic<std::size_t> next_{0};  // the round-robin ticket
};

}  // namespace weft::detail
