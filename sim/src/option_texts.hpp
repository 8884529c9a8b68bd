// option_texts.hpp — the run options as the CLI flags spell them, parsed with their range checks.
//
// The command line and a replay record (record.hpp) both hold the options as flag texts
// ("--cores" "4", "--fault" "inbox_full=0.050000"), so both go through parse_options and accept
// exactly the same values. Every number is strictly decimal and range-checked: a general integer
// conversion would wrap `-1`, saturate `2^64` or read `010` as octal.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <weft/sim/options.hpp>

namespace weft::sim {

struct scenario;

// Concatenation by appending (GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O3).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

// A decimal integer in [min, max], all of `text` (no sign on unsigned types, no '+', no spaces);
// throws invalid_options naming `flag` and the accepted range.
template <class T>
T parse_integer(const std::string& flag, const std::string& text, T min, T max) {
  T value{};
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || (ec == std::errc{} && ptr != end)) {
    throw invalid_options(flag, cat("'", text, "' is not a decimal integer; accepted: [", std::to_string(min), ", ",
                                    std::to_string(max), "]"));
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) throw out_of_range(flag, text, min, max);
  return value;
}

// The options as flag texts; an empty optional is a flag not given (its default applies).
struct option_texts {
  std::string strategy = "random";
  std::optional<std::string> depth, pct_steps, step_budget, cores, preemptions;
  std::vector<std::string> faults;  // KIND[=P], each kind at most once
  std::vector<std::string> params;  // NAME=V, each knob at most once
  bool swarm = false;
};

// The options `t` describes; throws invalid_options naming the flag of the first bad value.
// `s` (may be null) only adds a knob's declared range to a bad --param's message; the knobs
// themselves are checked by validate(scenario, options).
options parse_options(const option_texts& t, const scenario* s);

}  // namespace weft::sim
