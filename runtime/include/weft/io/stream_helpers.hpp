// weft/io/stream_helpers.hpp — whole-buffer reads and writes, and a buffered line reader.
//
// These are tasks over a byte_stream the caller keeps alive while they run.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include <weft/expected.hpp>
#include <weft/io/stream.hpp>
#include <weft/task.hpp>

namespace weft {

// Errors of weft's own I/O helpers (the OS's errors stay in std::system_category).
enum class io_errc {
  end_of_stream = 1,  // the stream ended before read_exact had its bytes, or inside a strict line
  line_too_long,      // a line_reader line exceeded its limit
  write_zero,         // the stream accepted no bytes of a non-empty write
};
const std::error_category& io_category() noexcept;
inline std::error_code make_error_code(io_errc e) noexcept { return {static_cast<int>(e), io_category()}; }

}  // namespace weft

template <>
struct std::is_error_code_enum<weft::io_errc> : std::true_type {};

namespace weft {

// Reads until `dst` is full. End of stream first is io_errc::end_of_stream (what was read stays
// in `dst`).
task<expected<void, std::error_code>> read_exact(byte_stream& stream, std::span<std::byte> dst);
// Writes every byte of `src`.
task<expected<void, std::error_code>> write_all(byte_stream& stream, std::span<const std::byte> src);

// Splits a stream into '\n'-terminated lines (the '\n', and a '\r' before it, removed). A line
// longer than line_max bytes (before its '\n') is io_errc::line_too_long, however it arrives;
// the reader then answers it to every later call, as the stream is no longer at a line's start.
class line_reader {
 public:
  static constexpr std::size_t default_line_max = 64 * 1024;
  static constexpr std::size_t chunk_size = 4096;

  // What the bytes after the last '\n' are when the stream ends there. A protocol whose messages
  // are lines wants `reject`: a peer that died mid-line must not have "VALUE 12" read as "VALUE 1".
  enum class unterminated_line {
    accept,  // a last line, returned before the end of stream (text files, a child's output)
    reject,  // io_errc::end_of_stream
  };

  explicit line_reader(byte_stream& stream, std::size_t line_max = default_line_max,
                       unterminated_line last = unterminated_line::accept);
  // The next line; nullopt at end of stream between lines.
  task<expected<std::optional<std::string>, std::error_code>> next_line();

 private:
  byte_stream& stream_;
  std::size_t line_max_;
  unterminated_line last_;
  std::vector<char> buffer_;
  std::vector<char> chunk_;  // what one read brings, before it joins buffer_
  std::size_t start_ = 0;
  bool ended_ = false;
};

}  // namespace weft
