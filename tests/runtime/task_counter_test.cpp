// task_counter_test.cpp — the runtime's count of unfinished tasks and a submission's admission
// hold (task_counter.hpp): a hold that ends releases its count; one handed over to the task it
// admitted stays until that task finishes.
#include <weft/detail/task_counter.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace {

using weft::detail::task_counter;

TEST(task_counter, a_hold_counts_until_it_ends) {
  task_counter counter;
  {
    task_counter::admission_hold hold(counter);
    EXPECT_EQ(counter.live(), 1u);
  }
  EXPECT_EQ(counter.live(), 0u);
  EXPECT_TRUE(counter.wait_idle(std::nullopt));
}

TEST(task_counter, a_handed_over_hold_is_the_tasks_count_until_it_finishes) {
  task_counter counter;
  {
    task_counter::admission_hold hold(counter);
    hold.hand_over();
  }
  EXPECT_EQ(counter.live(), 1u);  // the task is still unfinished
  EXPECT_FALSE(counter.wait_idle(weft::platform::clock::now() + std::chrono::milliseconds(1)));
  counter.finished();  // the task completes
  EXPECT_EQ(counter.live(), 0u);
  EXPECT_TRUE(counter.wait_idle(std::nullopt));
}

TEST(task_counter, tasks_counted_by_themselves_and_by_handed_over_holds_add_up) {
  task_counter counter;
  counter.started();  // a task spawned without a hold (a loop's own spawn)
  {
    task_counter::admission_hold hold(counter);
    EXPECT_EQ(counter.live(), 2u);
    hold.hand_over();
  }
  EXPECT_EQ(counter.live(), 2u);
  counter.finished();
  counter.finished();
  EXPECT_EQ(counter.live(), 0u);
}

TEST(task_counter, a_batch_of_finished_tasks_goes_at_once_and_wakes_a_waiter_only_at_zero) {
  task_counter counter;
  for (int i = 0; i < 5; ++i) counter.started();
  counter.finished_many(3);
  EXPECT_EQ(counter.live(), 2u);
  EXPECT_FALSE(counter.wait_idle(weft::platform::clock::now() + std::chrono::milliseconds(1)));
  counter.finished_many(2);
  EXPECT_EQ(counter.live(), 0u);
  EXPECT_TRUE(counter.wait_idle(std::nullopt));
}

}  // namespace
