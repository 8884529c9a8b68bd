// tests/runtime/temporary_awaitable_test.cpp — aggregates built inside a co_await expression
// (`co_await leaf{ptr}`, `co_await wait_on(message{ptr})`) are destroyed exactly once, whichever
// way the task leaves its wait: resumed, aborted, its loop destroyed, its runtime stopped. A
// compiler that destroys them twice (g++ 12) is refused at configure time; these tests are what
// that refusal protects, and run under ASan as well.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "runtime_test_support.hpp"

namespace {

using gate_ptr = std::shared_ptr<weft_test::remote_gate>;

// An aggregate leaf owning a reference: the pattern a user writes for a leaf with state.
struct owning_leaf {
  gate_ptr gate;
  bool poll_ready(const weft::waker& w) { return gate->poll_ready(w); }
  void await_resume() const noexcept {}
};

// An aggregate argument to a function that makes the leaf, in the same full-expression.
struct message {
  gate_ptr gate;
  int tag;
};
owning_leaf wait_on(const message& m) { return owning_leaf{m.gate}; }

weft::task<int> waits_in_operand(gate_ptr gate) {
  co_await owning_leaf{gate};
  co_return 1;
}

weft::task<int> waits_with_argument(gate_ptr gate) {
  co_await wait_on(message{gate, 7});
  co_return 2;
}

// One owner (the test) is all that may be left once the task is gone.
void expect_only_the_test_owns(const gate_ptr& gate) { EXPECT_EQ(gate.use_count(), 1); }

}  // namespace

TEST(temporary_awaitable, an_aggregate_operand_is_destroyed_once_when_the_task_resumes) {
  auto gate = std::make_shared<weft_test::remote_gate>();
  {
    weft::event_loop loop;
    auto handle = loop.spawn(waits_in_operand(gate));
    loop.run_until_stalled();
    ASSERT_TRUE(gate->has_waiter());
    gate->open_and_wake();
    loop.run();
    auto out = handle.join();
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, 1);
  }
  expect_only_the_test_owns(gate);
}

TEST(temporary_awaitable, an_aggregate_operand_is_destroyed_once_when_the_task_is_aborted) {
  auto gate = std::make_shared<weft_test::remote_gate>();
  {
    weft::event_loop loop;
    auto handle = loop.spawn(waits_in_operand(gate));
    loop.run_until_stalled();
    ASSERT_TRUE(gate->has_waiter());
    handle.abort();
    loop.run();
    auto out = handle.join();
    ASSERT_FALSE(out);
    EXPECT_TRUE(out.error().is_cancelled());
    gate->open_and_wake();  // drops the gate's waker clone: the last reference to the cell
  }
  expect_only_the_test_owns(gate);
}

TEST(temporary_awaitable, an_aggregate_argument_is_destroyed_once_when_the_task_is_aborted) {
  auto gate = std::make_shared<weft_test::remote_gate>();
  {
    weft::event_loop loop;
    auto handle = loop.spawn(waits_with_argument(gate));
    loop.run_until_stalled();
    ASSERT_TRUE(gate->has_waiter());
    handle.abort();
    loop.run();
    EXPECT_TRUE(handle.join().error().is_cancelled());
  }
  gate->open_and_wake();
  expect_only_the_test_owns(gate);
}

TEST(temporary_awaitable, aggregates_are_destroyed_once_when_the_loop_is_destroyed) {
  auto gate = std::make_shared<weft_test::remote_gate>();
  weft::join_handle<int> in_operand;
  weft::join_handle<int> in_argument;
  {
    weft::event_loop loop;
    in_operand = loop.spawn(waits_in_operand(gate));
    in_argument = loop.spawn(waits_with_argument(gate));
    loop.run_until_stalled();
    ASSERT_TRUE(gate->has_waiter());
  }  // destroys both suspended frames
  EXPECT_TRUE(in_operand.join().error().is_cancelled());
  EXPECT_TRUE(in_argument.join().error().is_cancelled());
  gate->open_and_wake();
  expect_only_the_test_owns(gate);
}

TEST(temporary_awaitable, aggregates_are_destroyed_once_when_the_runtime_stops) {
  auto gate = std::make_shared<weft_test::remote_gate>();
  weft::join_handle<int> in_operand;
  weft::join_handle<int> in_argument;
  {
    auto rt = weft::runtime::builder().workers(2).build();
    in_operand = rt.scheduler().spawn([gate]() { return waits_in_operand(gate); });
    in_argument = rt.scheduler().spawn([gate]() { return waits_with_argument(gate); });
    ASSERT_TRUE(weft_test::eventually([&] { return gate->polls() >= 2; }, weft_test::generous));
    const weft::stop_outcome out = std::move(rt).stop();
    EXPECT_EQ(out.counts().tasks_cancelled, 2u);
  }
  EXPECT_TRUE(in_operand.join().error().is_cancelled());
  EXPECT_TRUE(in_argument.join().error().is_cancelled());
  gate->open_and_wake();
  expect_only_the_test_owns(gate);
}
