// docs/examples/pipeline.cpp — a subprocess pipeline: `printf` feeds `sort`, whose output is read
// line by line.
//
// The first child's stdout is read by the loop and written to the second child's stdin, so the
// loop is the pipe between them; both are waited for on their pidfds. Exits non-zero on a wrong
// result.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

weft::task<int> run() {
  auto producer = weft::child_process::spawn({"printf", "pear\\napple\\nfig\\n"}, weft::spawn_options{.out = weft::stdio::pipe});
  if (!producer) co_return 1;
  auto sorter = weft::child_process::spawn({"sort"}, weft::spawn_options{.in = weft::stdio::pipe, .out = weft::stdio::pipe});
  if (!sorter) co_return 1;
  // Forward the producer's output into the sorter, then close the sorter's input.
  std::byte buffer[256];
  for (;;) {
    auto n = co_await producer->stdout_pipe().read(buffer);
    if (!n) co_return 1;
    if (*n == 0) break;
    if (!co_await weft::write_all(sorter->stdin_pipe(), std::span<const std::byte>(buffer, *n))) co_return 1;
  }
  sorter->stdin_pipe().close();
  std::vector<std::string> lines;
  weft::line_reader reader(sorter->stdout_pipe());
  for (;;) {
    auto line = co_await reader.next_line();
    if (!line) co_return 1;
    if (!*line) break;
    lines.push_back(**line);
  }
  auto a = co_await producer->wait();
  auto b = co_await sorter->wait();
  const bool ok = a && a->success() && b && b->success() && lines == std::vector<std::string>{"apple", "fig", "pear"};
  std::printf("pipeline: %zu sorted lines, %s\n", lines.size(), ok ? "as expected" : "WRONG");
  co_return ok ? 0 : 1;
}

}  // namespace

int main() {
  weft::event_loop loop;
  return loop.block_on(run());
}
