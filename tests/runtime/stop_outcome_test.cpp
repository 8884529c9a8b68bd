// tests/runtime/stop_outcome_test.cpp — the words for what a stop or a drain achieved: to_string
// of stop_error, stop_outcome::kind, drain_outcome, stop_counts and stop_outcome.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <weft/stop_outcome.hpp>

namespace {

// Usable in constant expressions, like the other enums' to_string.
static_assert(std::string_view(weft::to_string(weft::stop_outcome::incomplete)) == "incomplete");
static_assert(std::string_view(weft::to_string(weft::drain_outcome::timed_out)) == "timed_out");

}  // namespace

TEST(stop_outcome_to_string, names_every_stop_error) {
  EXPECT_STREQ(weft::to_string(weft::stop_error::called_from_worker), "called_from_worker");
  EXPECT_STREQ(weft::to_string(weft::stop_error::called_from_blocking_callback), "called_from_blocking_callback");
  // A value outside the enum is not passed off as one of its reasons.
  EXPECT_STREQ(weft::to_string(static_cast<weft::stop_error>(7)), "unknown");
}

TEST(stop_outcome_to_string, names_every_kind) {
  EXPECT_STREQ(weft::to_string(weft::stop_outcome::complete), "complete");
  EXPECT_STREQ(weft::to_string(weft::stop_outcome::incomplete), "incomplete");
  EXPECT_STREQ(weft::to_string(weft::stop_outcome::error), "error");
  EXPECT_STREQ(weft::to_string(static_cast<weft::stop_outcome::kind>(3)), "unknown");
}

TEST(stop_outcome_to_string, names_every_drain_outcome) {
  EXPECT_STREQ(weft::to_string(weft::drain_outcome::drained), "drained");
  EXPECT_STREQ(weft::to_string(weft::drain_outcome::timed_out), "timed_out");
  EXPECT_STREQ(weft::to_string(static_cast<weft::drain_outcome>(7)), "unknown");
}

TEST(stop_outcome_to_string, spells_out_every_count) {
  const weft::stop_counts counts{.tasks_cancelled = 3, .callbacks_discarded = 0, .blocking_discarded = 2};
  EXPECT_EQ(weft::to_string(counts), "tasks_cancelled=3 callbacks_discarded=0 blocking_discarded=2");
}

TEST(stop_outcome_to_string, an_outcome_says_its_kind_and_what_goes_with_it) {
  EXPECT_EQ(weft::to_string(weft::stop_outcome::make_complete()), "complete");
  EXPECT_EQ(weft::to_string(weft::stop_outcome::make_incomplete({.tasks_cancelled = 1, .callbacks_discarded = 4})),
            "incomplete (tasks_cancelled=1 callbacks_discarded=4 blocking_discarded=0)");
  EXPECT_EQ(weft::to_string(weft::stop_outcome::make_error(weft::stop_error::called_from_blocking_callback)),
            "error (called_from_blocking_callback)");
}
