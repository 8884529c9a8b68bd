// record.hpp — replay records: one saved run (scenario, seed, options) as a small versioned JSON
// file, tied to the build that wrote it.
//
// `weft-sim run|fuzz|shrink --save FILE` and weft::sim::check write one; `weft-sim replay FILE`
// reads it back. The options are stored as the flag texts replay_flags() renders and read back
// through parse_options (option_texts.hpp), so a record accepts exactly what the flags accept and
// round-trips exactly. A record is input from anywhere: every field is type- and range-checked,
// unknown fields are refused, and every refusal is one invalid_options with a one-line message.
// docs/simulator.md ("Replay records") describes the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <weft/sim/options.hpp>

namespace weft::sim {

struct scenario;

inline constexpr std::uint64_t record_version = 1;
inline constexpr std::string_view record_format = "weft-sim record";
// A record is a few hundred bytes; anything near this is not one.
inline constexpr std::size_t record_bytes_max = std::size_t{1} << 20;
// Scenario names and knob lists are short; these bound what a hostile record makes us hold.
inline constexpr std::size_t record_name_bytes_max = 256;
inline constexpr std::size_t record_params_max = 1'024;
// The record, its options and their lists: deeper nesting is refused before it is built.
inline constexpr std::size_t record_depth_max = 3;

// A record written by another build (weft-sim exits 6 for it; 7 for any other bad record).
class foreign_record : public invalid_options {
 public:
  using invalid_options::invalid_options;
};

struct record {
  std::string build;         // build_id() of the program that wrote it
  std::string command;       // run | fuzz | shrink | check
  std::string scenario;
  std::uint64_t seed = 0;
  options opts;
  bool passed = false;       // the saved run's outcome
  std::string failure;       // the first line of its first failure; empty when it passed
  std::uint64_t trace_hash = 0;
};

// The running program's build: 16 hex digits of a 64-bit FNV-1a hash of its executable's bytes
// (/proc/self/exe), computed on first use. Any change to the code, the compiler or its flags
// changes the bytes; rerunning the same binary does not. "unknown" when the executable cannot be
// read; a record with that id matches no build.
const std::string& build_id();

// The record as JSON text (ends in a newline).
std::string render_record(const record& r);

// The record in `text`. Throws invalid_options (flag "record") for anything but a well-formed
// record of record_version, and, unless `force`, for a record whose build is not `this_build`
// (naming both). Checks the options' ranges, not the scenario (load_record does).
record parse_record(std::string_view text, const std::string& this_build, bool force);

struct loaded_record {
  record rec;
  const scenario* scn = nullptr;  // registered
};

// parse_record, then the registered scenario and its knobs (validate(scenario, options)).
loaded_record load_record(std::string_view text, const std::string& this_build, bool force);

// The bytes of the record file at `path`; throws invalid_options for a file that cannot be read
// or is larger than record_bytes_max (the message does not repeat the path).
std::string read_record_file(const std::string& path);

// The reason a record was refused: `e`'s message without its "record: " prefix, for a caller
// that names the file first.
std::string refusal_reason(const invalid_options& e);

// `text` with control bytes escaped (\n, \xNN) and cut to `bytes_max`: what a record holds,
// made fit for a one-line message.
std::string one_line(std::string_view text, std::size_t bytes_max = 512);

}  // namespace weft::sim
