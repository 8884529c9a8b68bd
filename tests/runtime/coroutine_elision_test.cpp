// coroutine_elision_test.cpp — a task created and kept in a function that then throws keeps its
// frame on the heap. clang 14's coroutine elision, when it sees a task's destroy on every path that
// returns, puts the frame in the caller's stack frame and forgets the paths that leave by an
// exception; weft's task destroys its frame out of line so that no such proof exists
// (destroy_frame_opaquely, task.hpp). Built at -O3 whatever the build type: the elision happens
// only when the optimiser inlines the coroutine's ramp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include <weft/weft.hpp>

namespace {

weft::task<int> value_task(int value) { co_return value; }

enum class before_return { nothing, keep_a_task, make_and_drop_a_task, keep_then_throw };

// A spawn factory that does one of the above before it returns value_task(2): the shape in which
// the elision showed, the factory's call inlined into the first poll.
struct factory {
  before_return* mode;
  std::vector<weft::task<int>>* kept;
  weft::task<int> operator()() const {
    switch (*mode) {
      case before_return::nothing:
        break;
      case before_return::keep_a_task:
        kept->push_back(value_task(1));
        break;
      case before_return::make_and_drop_a_task: {
        weft::task<int> dropped = value_task(1);
        break;
      }
      case before_return::keep_then_throw:
        kept->push_back(value_task(1));
        throw std::runtime_error("factory failed");
    }
    return value_task(2);
  }
};

}  // namespace

TEST(coroutine_elision, a_task_kept_before_a_throw_outlives_the_function_that_made_it) {
  weft::event_loop loop;
  before_return mode = before_return::nothing;
  std::vector<weft::task<int>> kept;
  const factory make{&mode, &kept};
  for (before_return m : {before_return::nothing, before_return::make_and_drop_a_task, before_return::keep_a_task,
                          before_return::keep_then_throw}) {
    mode = m;
    auto h = loop.spawn(make);
    loop.run();
    auto r = h.join();
    EXPECT_EQ(r.has_value(), m != before_return::keep_then_throw);
  }
  ASSERT_EQ(kept.size(), 2u);
  // Both kept tasks still run: an elided frame would have lived in the first poll's dead stack.
  for (weft::task<int>& t : kept) {
    auto h = loop.spawn(std::move(t));
    loop.run();
    auto r = h.join();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, 1);
  }
}
