// tools/bench/file_read_common.hpp — what the file_read programs share (weft's, and the plain
// pread loop it is measured against): flags, the passes, the result line.
//
//   <program> --path FILE [--passes N]
//
// Reads FILE (a regular file of at least one block, page-cached by the caller) from start to end
// in file_read_block_bytes reads, one at a time at increasing offsets: one untimed pass (it warms
// the cache and the program), then N timed passes (1 unless told). Prints
//   scenario=file_read runtime=<runtime> value=<GiB/s of the timed passes> unit=GiB/s
// A bad flag ends the program with one line naming it and exit status 2; a pass that reads other
// than the whole file ends it with status 1.
#pragma once

#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include <sys/stat.h>

namespace bench {

inline constexpr std::size_t file_read_block_bytes = 4096;
inline constexpr unsigned file_read_passes_max = 1000;

struct file_read_args {
  std::string path;
  std::uint64_t size = 0;  // of the file, when the flags were read
  unsigned passes = 1;
};

inline file_read_args parse_file_read_args(int argc, char** argv, std::string_view program) {
  file_read_args a;
  try {
    tool_flags::reader r(argc, argv, "--path FILE, --passes N");
    while (r.next()) {
      if (r.is("--path")) {
        const std::string_view flag = r.flag();
        a.path = r.value();
        struct stat st {};
        if (::stat(a.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
          throw tool_flags::usage_error(flag, "'" + a.path + "' is not a regular file");
        }
        if (static_cast<std::uint64_t>(st.st_size) < file_read_block_bytes) {
          throw tool_flags::usage_error(flag, "'" + a.path + "' is shorter than one " +
                                                  std::to_string(file_read_block_bytes) + "-byte block");
        }
        a.size = static_cast<std::uint64_t>(st.st_size);
      } else if (r.is("--passes")) {
        a.passes = tool_flags::parse_integer<unsigned>(r.flag(), r.value(), 1, file_read_passes_max);
      } else {
        r.unknown();
      }
    }
    if (a.path.empty()) throw tool_flags::usage_error("--path", "required flag missing");
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error(program, e);
  }
  return a;
}

// Runs `pass` (reads the whole file once, returns the bytes it read) untimed once, then
// a.passes times on the steady clock, and reports the timed passes' throughput.
template <class Pass>
void measure_file_read(const file_read_args& a, const char* runtime, Pass&& pass) {
  auto checked_pass = [&] {
    const std::uint64_t got = pass();
    if (got != a.size) {
      std::fprintf(stderr, "file_read: a pass read %llu bytes of %llu\n", static_cast<unsigned long long>(got),
                   static_cast<unsigned long long>(a.size));
      std::exit(1);
    }
  };
  checked_pass();
  const auto t0 = wall::now();
  for (unsigned i = 0; i < a.passes; ++i) checked_pass();
  const double seconds = ns_since(t0) / 1e9;
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  report("file_read", runtime, static_cast<double>(a.size) * a.passes / gib / seconds, "GiB/s");
}

}  // namespace bench
