// docs/examples/file_copy.cpp — copies a file through the loop's driver, then checks the copy.
//
// Writes a source file, copies it in 64 KiB chunks with read_at/write_at, syncs the copy, compares
// sizes and contents, and removes both. Exits non-zero on a wrong result.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr std::size_t chunk = 64 * 1024;
constexpr std::size_t source_bytes = 1024 * 1024 + 123;  // not a multiple of the chunk

weft::task<bool> copy(const std::string& from, const std::string& to) {
  auto in = co_await weft::file::open(from);
  if (!in) co_return false;
  auto out = co_await weft::file::open(to, weft::open_options{.read = false, .write = true, .create = true, .truncate = true});
  if (!out) co_return false;
  std::vector<std::byte> buffer(chunk);
  std::uint64_t at = 0;
  for (;;) {
    auto n = co_await in->read_at(buffer, at);
    if (!n) co_return false;
    if (*n == 0) break;
    std::size_t written = 0;
    while (written < *n) {
      auto w = co_await out->write_at(std::span<const std::byte>(buffer.data() + written, *n - written), at + written);
      if (!w || *w == 0) co_return false;
      written += *w;
    }
    at += *n;
  }
  co_return static_cast<bool>(co_await out->sync_all());
}

weft::task<int> run(const std::string& dir) {
  const std::string from = dir + "/source", to = dir + "/copy";
  std::string data(source_bytes, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  {
    auto f = co_await weft::file::open(from, weft::open_options{.write = true, .create = true, .truncate = true});
    if (!f) co_return 1;
    std::size_t done = 0;
    while (done < data.size()) {
      auto w = co_await f->write(std::as_bytes(std::span<const char>(data)).subspan(done));
      if (!w || *w == 0) co_return 1;
      done += *w;
    }
  }
  if (!co_await copy(from, to)) co_return 1;
  auto copied = co_await weft::file::read_all(to);
  if (!copied) co_return 1;
  const bool same = copied->size() == data.size() &&
                    std::equal(copied->begin(), copied->end(), reinterpret_cast<const std::byte*>(data.data()));
  (void)co_await weft::file::remove(from);
  (void)co_await weft::file::remove(to);
  std::printf("file_copy: %zu bytes copied, %s\n", copied->size(), same ? "identical" : "DIFFERENT");
  co_return same ? 0 : 1;
}

}  // namespace

int main() {
  char dir[] = "/tmp/weft-file-copy-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return 1;
  weft::event_loop loop;
  const int rc = loop.block_on(run(dir));
  ::rmdir(dir);
  return rc;
}
