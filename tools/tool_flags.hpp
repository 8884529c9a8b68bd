// tools/tool_flags.hpp — strict command-line flags for weft's own programs (the demos and the
// benchmarks), worded like weft-sim's (sim/src/cli.cpp).
//
// Every number is parsed as the whole of its text, in decimal, and checked against an accepted
// range: strtoull and atoi would wrap `-1`, saturate `2^64` and read `12abc` as 12. A bad flag
// ends the program before any work with one line naming it and exit status exit_usage:
//   weft-demo: --items: 0 is outside the accepted range [1, 1000000]
//   weft-demo: --items: 'ten' is not a decimal integer; accepted: [1, 1000000]
//   weft-demo: --items: needs a value
//   weft-demo: --bogus: unknown flag; accepted: --producers N, --items N
// Standalone (the standard library only): the Asio peer includes it through bench_common.hpp.
#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace tool_flags {

inline constexpr int exit_usage = 2;  // a bad flag or value

// A bad flag or value: what() is "--flag: message".
class usage_error : public std::invalid_argument {
 public:
  usage_error(std::string_view flag, std::string_view message)
      : std::invalid_argument(std::string(flag) + ": " + std::string(message)) {}
};

template <class T>
std::string number_text(T v) {
  return std::to_string(v);
}
inline std::string number_text(double v) {  // "0.001", "1e+06": as short as it reads
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
template <class T>
std::string range_text(T min, T max) {
  return "[" + number_text(min) + ", " + number_text(max) + "]";
}

template <class T>
usage_error outside_range(std::string_view flag, std::string_view text, T min, T max) {
  return usage_error(flag, std::string(text) + " is outside the accepted range " + range_text(min, max));
}

// `text`, all of it, as a decimal integer in [min, max] (no '+', no spaces; a '-' only for a
// signed T). An integer too large for T is out of range, never wrapped or saturated.
template <class T>
T parse_integer(std::string_view flag, std::string_view text, T min, T max) {
  static_assert(std::is_integral_v<T>);
  T value{};
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  // A negative number for an unsigned flag is a number outside the range, not a typo.
  const bool negative_digits = std::is_unsigned_v<T> && text.size() > 1 && text.front() == '-' &&
                               text.find_first_not_of("0123456789", 1) == std::string_view::npos;
  if (negative_digits) throw outside_range(flag, text, min, max);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    throw usage_error(flag, "'" + std::string(text) + "' is not a decimal integer; accepted: " + range_text(min, max));
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) throw outside_range(flag, text, min, max);
  return value;
}

// `text`, all of it, as a decimal number (digits, an optional fraction and exponent) in
// [min, max]; infinities and NaN are refused.
inline double parse_decimal(std::string_view flag, std::string_view text, double min, double max) {
  double value = 0.0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  const bool named = text.find_first_of("iInN") != std::string_view::npos;  // inf, nan
  if (text.empty() || named || ec == std::errc::invalid_argument || ptr != end) {
    throw usage_error(flag, "'" + std::string(text) + "' is not a decimal number; accepted: " + range_text(min, max));
  }
  if (ec == std::errc::result_out_of_range || !(value >= min && value <= max)) {
    throw outside_range(flag, text, min, max);
  }
  return value;
}

// Walks argv flag by flag:
//   tool_flags::reader r(argc, argv, "--items N");
//   while (r.next()) {
//     if (r.is("--items")) items = tool_flags::parse_integer(r.flag(), r.value(), 1, max_items);
//     else r.unknown();
//   }
class reader {
 public:
  // `accepted` lists the program's flags for the unknown-flag message ("--items N, --list").
  reader(int argc, char** argv, std::string_view accepted) : argc_(argc), argv_(argv), accepted_(accepted) {}

  // Moves to the next flag; false past the last argument.
  bool next() {
    flag_at_ = ++at_;
    return at_ < argc_;
  }
  // The current flag, also after value() (the two may be called in either order).
  std::string_view flag() const { return argv_[flag_at_]; }
  bool is(std::string_view name) const { return flag() == name; }
  // The argument after the flag, consumed.
  std::string_view value() {
    if (at_ + 1 >= argc_) throw usage_error(flag(), "needs a value");
    return argv_[++at_];
  }
  [[noreturn]] void unknown() const {
    throw usage_error(flag(), "unknown flag; accepted: " + std::string(accepted_));
  }

 private:
  int argc_;
  char** argv_;
  std::string_view accepted_;
  int at_ = 0;       // the last argument consumed
  int flag_at_ = 0;  // the current flag
};

// Prints "<program>: <what>" and ends the program with exit_usage.
[[noreturn]] inline void exit_with_usage_error(std::string_view program, const std::exception& e) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(), e.what());
  std::exit(exit_usage);
}

}  // namespace tool_flags
