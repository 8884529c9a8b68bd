// weft-file-read-pread — the file_read scenario's reference: a plain loop of pread(2) calls, one
// 4 KiB block after another, on the calling thread; no runtime. What weft's file reads are
// measured against (../../file_read_common.hpp says the flags and the output).
//
//   weft-file-read-pread --path FILE [--passes N]
#include "../../file_read_common.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const bench::file_read_args a = bench::parse_file_read_args(argc, argv, "weft-file-read-pread");
  const int fd = ::open(a.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench::fail("file_read", std::strerror(errno));
  std::vector<std::byte> block(bench::file_read_block_bytes);
  bench::measure_file_read(a, "pread", [&]() -> std::uint64_t {
    std::uint64_t offset = 0;
    for (;;) {
      const ssize_t n = ::pread(fd, block.data(), block.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) bench::fail("file_read", std::strerror(errno));
      if (n == 0) return offset;
      offset += static_cast<std::uint64_t>(n);
    }
  });
  ::close(fd);
}
