// stream_helpers.cpp — read_exact, write_all and line_reader.
#include <algorithm>

#include <weft/io/stream_helpers.hpp>
#include <weft/join_error.hpp>

namespace weft {

namespace {
class io_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "weft.io"; }
  std::string message(int e) const override {
    switch (static_cast<io_errc>(e)) {
      case io_errc::end_of_stream: return "the stream ended before the requested bytes arrived";
      case io_errc::line_too_long: return "a line exceeded the line reader's limit";
      case io_errc::write_zero: return "the stream accepted no bytes";
    }
    return "unknown weft.io error";
  }
};
}  // namespace

const std::error_category& io_category() noexcept {
  static const io_category_impl category;
  return category;
}

task<expected<void, std::error_code>> read_exact(byte_stream& stream, std::span<std::byte> dst) {
  std::size_t done = 0;
  while (done < dst.size()) {
    auto n = co_await stream.read(dst.subspan(done));
    if (!n) co_return unexpected(n.error());
    if (*n == 0) co_return unexpected(make_error_code(io_errc::end_of_stream));
    done += *n;
  }
  co_return expected<void, std::error_code>{};
}

task<expected<void, std::error_code>> write_all(byte_stream& stream, std::span<const std::byte> src) {
  std::size_t done = 0;
  while (done < src.size()) {
    auto n = co_await stream.write(src.subspan(done));
    if (!n) co_return unexpected(n.error());
    if (*n == 0) co_return unexpected(make_error_code(io_errc::write_zero));
    done += *n;
  }
  co_return expected<void, std::error_code>{};
}

line_reader::line_reader(byte_stream& stream, std::size_t line_max, unterminated_line last)
    : stream_(stream), line_max_(line_max), last_(last) {
  if (line_max == 0) throw usage_error("line_reader: line_max must be at least 1");
  if (last != unterminated_line::accept && last != unterminated_line::reject) {
    throw usage_error("line_reader: unterminated_line is neither accept nor reject");
  }
}

task<expected<std::optional<std::string>, std::error_code>> line_reader::next_line() {
  std::size_t scanned = start_;
  for (;;) {
    const auto begin = buffer_.begin() + static_cast<std::ptrdiff_t>(scanned);
    const auto newline = std::find(begin, buffer_.end(), '\n');
    if (newline != buffer_.end()) {
      const auto first = buffer_.begin() + static_cast<std::ptrdiff_t>(start_);
      if (static_cast<std::size_t>(newline - first) > line_max_) {
        co_return unexpected(make_error_code(io_errc::line_too_long));
      }
      std::string line(first, newline);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      start_ = static_cast<std::size_t>(newline - buffer_.begin()) + 1;
      if (start_ == buffer_.size()) {
        buffer_.clear();
        start_ = 0;
      }
      co_return std::optional<std::string>(std::move(line));
    }
    if (buffer_.size() - start_ > line_max_) co_return unexpected(make_error_code(io_errc::line_too_long));
    if (ended_) {
      if (start_ == buffer_.size()) co_return std::optional<std::string>();
      if (last_ == unterminated_line::reject) co_return unexpected(make_error_code(io_errc::end_of_stream));
      std::string last(buffer_.begin() + static_cast<std::ptrdiff_t>(start_), buffer_.end());
      buffer_.clear();
      start_ = 0;
      co_return std::optional<std::string>(std::move(last));
    }
    // Compact, then read one more chunk.
    if (start_ > 0) {
      buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
      start_ = 0;
    }
    scanned = buffer_.size();
    // The read lands in a chunk of its own and joins the buffer once it returns: a call dropped
    // at the read (a timeout, an abort) leaves the buffer as it was, and its frame's destruction
    // touches nothing of the reader, which may be gone by then. The dropped read's bytes wait in
    // the stream for the next call.
    if (chunk_.empty()) chunk_.resize(chunk_size);
    auto n = co_await stream_.read(std::as_writable_bytes(std::span<char>(chunk_)));
    if (!n) co_return unexpected(n.error());
    buffer_.insert(buffer_.end(), chunk_.begin(), chunk_.begin() + static_cast<std::ptrdiff_t>(*n));
    if (*n == 0) ended_ = true;
  }
}

}  // namespace weft
