// weft-bench-file-read — the file_read scenario on weft: on one event loop, weft::file reads of
// 4 KiB at increasing offsets, one awaited after another, over a page-cached file; measured
// against the plain pread loop of peers/pread/ (file_read_common.hpp says the flags and the
// output).
//
//   weft-bench-file-read --path FILE [--passes N]
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "file_read_common.hpp"

namespace {

// One pass over the file; the bytes read, or fails the program on an error.
weft::task<std::uint64_t> read_pass(weft::file& f, std::span<std::byte> block) {
  std::uint64_t offset = 0;
  for (;;) {
    weft::expected<std::size_t, std::error_code> n = co_await f.read_at(block, offset);
    if (!n) bench::fail("file_read", n.error().message().c_str());
    if (*n == 0) co_return offset;
    offset += *n;
  }
}

weft::task<weft::expected<weft::file, std::error_code>> open_file(std::string path) {
  co_return co_await weft::file::open(path, weft::open_options{.read = true});
}

}  // namespace

int main(int argc, char** argv) {
  const bench::file_read_args a = bench::parse_file_read_args(argc, argv, "weft-bench-file-read");
  weft::event_loop loop;
  weft::expected<weft::file, std::error_code> opened =
      loop.block_on(open_file(a.path));
  if (!opened) bench::fail("file_read", opened.error().message().c_str());
  std::vector<std::byte> block(bench::file_read_block_bytes);
  bench::measure_file_read(a, "weft", [&] { return loop.block_on(read_pass(*opened, block)); });
}
