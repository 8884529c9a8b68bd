#include <gtest/gtest.h>
#include <weft/weft.hpp>
using namespace std::chrono_literals;

weft::task<int> answer() { co_await weft::sleep(1ms); co_return 42; }

TEST(smoke, block_on_returns_value) {
  weft::event_loop loop;
  EXPECT_EQ(loop.block_on(answer()), 42);
}
