// worker_picker_test.cpp — where spawn_anywhere places a task (worker_picker.hpp), over a scripted
// view of the workers: their activity, which CPU they last waited on, and the caller's last join.
#include <weft/detail/worker_picker.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace {

using weft::detail::worker_picker;
using weft::platform::owner_activity;

struct scripted_view {
  std::vector<owner_activity> activities;
  std::vector<bool> on_my_cpu;
  std::ptrdiff_t joined = -1;  // the worker the caller's last join took an output from

  explicit scripted_view(std::size_t workers)
      : activities(workers, owner_activity::other), on_my_cpu(workers, false) {}
  owner_activity activity(std::size_t w) const { return activities.at(w); }
  bool on_caller_cpu(std::size_t w) const { return on_my_cpu.at(w); }
  bool joined_from(std::size_t w) const { return joined == static_cast<std::ptrdiff_t>(w); }
};

std::vector<std::size_t> picks(worker_picker& picker, const scripted_view& view, int n) {
  std::vector<std::size_t> out;
  for (int i = 0; i < n; ++i) out.push_back(picker.pick(view.activities.size(), view));
  return out;
}

TEST(worker_picker, round_robin_while_no_worker_is_idle_and_awake) {
  worker_picker picker;
  scripted_view view(3);
  EXPECT_EQ(picks(picker, view, 7), (std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 0}));
  view.activities.assign(3, owner_activity::running);  // busy, and nobody joined from them
  EXPECT_EQ(picks(picker, view, 3), (std::vector<std::size_t>{1, 2, 0}));
}

TEST(worker_picker, a_spinning_worker_keeps_the_picks_and_round_robin_resumes_where_it_was) {
  worker_picker picker;
  scripted_view view(3);
  EXPECT_EQ(picks(picker, view, 2), (std::vector<std::size_t>{0, 1}));  // ticket now at 2
  view.activities[2] = owner_activity::spinning;
  EXPECT_EQ(picks(picker, view, 4), (std::vector<std::size_t>{2, 2, 2, 2}));
  view.activities[2] = owner_activity::other;  // it went to sleep (or was notified)
  EXPECT_EQ(picks(picker, view, 3), (std::vector<std::size_t>{2, 0, 1}));
}

TEST(worker_picker, the_last_pick_is_asked_before_other_spinning_workers) {
  worker_picker picker;
  scripted_view view(4);
  view.activities[1] = owner_activity::spinning;
  EXPECT_EQ(picker.pick(4, view), 1u);  // found by the probe after worker 0 (the initial last)
  view.activities[3] = owner_activity::spinning;
  EXPECT_EQ(picks(picker, view, 3), (std::vector<std::size_t>{1, 1, 1}));
  view.activities[1] = owner_activity::running;  // busy now: the next spinning one after it
  EXPECT_EQ(picker.pick(4, view), 3u);
}

TEST(worker_picker, a_running_worker_is_picked_only_when_the_caller_just_joined_from_it) {
  worker_picker picker;
  scripted_view view(2);
  view.activities[0] = owner_activity::spinning;
  EXPECT_EQ(picker.pick(2, view), 0u);
  // Worker 0 runs the task; worker 1 spins. Without a join from 0, the spinning one wins.
  view.activities[0] = owner_activity::running;
  view.activities[1] = owner_activity::spinning;
  EXPECT_EQ(picker.pick(2, view), 1u);
  // Back on 0 (spinning), then running again: the caller joined the task 0 ran, so 0 is about to
  // idle and keeps the next spawn although 1 spins.
  view.activities[0] = owner_activity::spinning;
  view.activities[1] = owner_activity::other;
  EXPECT_EQ(picker.pick(2, view), 0u);
  view.activities[0] = owner_activity::running;
  view.activities[1] = owner_activity::spinning;
  view.joined = 0;
  EXPECT_EQ(picker.pick(2, view), 0u);
  // A join from a notified (or sleeping) worker does not make it a candidate.
  view.activities[0] = owner_activity::other;
  EXPECT_EQ(picker.pick(2, view), 1u);
}

TEST(worker_picker, workers_that_last_waited_on_the_callers_cpu_are_not_preferred) {
  worker_picker picker;
  scripted_view view(3);
  view.activities.assign(3, owner_activity::spinning);
  view.on_my_cpu[0] = true;
  view.on_my_cpu[1] = true;
  EXPECT_EQ(picker.pick(3, view), 2u);
  EXPECT_EQ(picker.pick(3, view), 2u);
  view.on_my_cpu[2] = true;  // every idle worker shares the caller's CPU: round robin
  EXPECT_EQ(picks(picker, view, 3), (std::vector<std::size_t>{0, 1, 2}));
  // The same holds for a worker the caller just joined from.
  view.activities.assign(3, owner_activity::other);
  view.activities[2] = owner_activity::running;
  view.joined = 2;
  EXPECT_EQ(picker.pick(3, view), 0u);  // the round robin's next ticket, not worker 2
}

TEST(worker_picker, a_pick_probes_at_most_worker_pick_probes_workers) {
  static_assert(weft::detail::worker_pick_probes == 4);
  worker_picker picker;
  scripted_view view(8);
  view.activities[6] = owner_activity::spinning;  // beyond the probes from worker 0
  EXPECT_EQ(picker.pick(8, view), 0u);            // round robin
  view.activities[3] = owner_activity::spinning;  // within them
  EXPECT_EQ(picker.pick(8, view), 3u);
  EXPECT_EQ(picker.pick(8, view), 3u);
  view.activities[3] = owner_activity::other;
  EXPECT_EQ(picker.pick(8, view), 6u);  // probed from worker 3 now
}

TEST(worker_picker, one_worker_is_always_picked) {
  worker_picker picker;
  scripted_view view(1);
  EXPECT_EQ(picks(picker, view, 3), (std::vector<std::size_t>{0, 0, 0}));
  view.activities[0] = owner_activity::spinning;
  view.on_my_cpu[0] = true;
  EXPECT_EQ(picks(picker, view, 2), (std::vector<std::size_t>{0, 0}));
}

}  // namespace
