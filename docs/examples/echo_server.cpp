// docs/examples/echo_server.cpp — a TCP echo server with one SO_REUSEPORT listener per worker.
//
// Each pinned worker binds its own listener on the same port; the kernel spreads connections
// among them, and every connection is served on the worker that accepted it (tasks never move).
// A client on the main thread's own loop opens several connections, checks every echo and the
// end of each stream, and the runtime is stopped. Exits non-zero on a wrong result. The server
// and client are echo_service.hpp's, which the simulator's io_echo scenario runs too.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "echo_service.hpp"

namespace {

constexpr std::size_t workers = 2;
constexpr std::size_t connections = 8;

}  // namespace

int main() {
  weft::event_loop loop;  // the client's, on the main thread
  const std::uint16_t port = loop.block_on(echo_example::free_port());
  weft::runtime rt = weft::runtime::builder().workers(workers).pin_workers(true).build();
  for (std::size_t w = 0; w < workers; ++w) {
    auto bound = rt.worker_scheduler(w).spawn([port] { return echo_example::listen_here(port); }).join();
    if (!bound || !*bound) {
      std::fprintf(stderr, "echo_server: worker %zu could not bind port %u\n", w, port);
      return 1;
    }
  }
  std::vector<echo_example::conversation> talks;
  loop.block_on(echo_example::client(port, echo_example::greetings(connections), talks));
  (void)std::move(rt).stop();
  const auto ok = std::count_if(talks.begin(), talks.end(), [](const auto& t) { return t.echoed(); });
  std::printf("echo_server: %td of %zu connections echoed on port %u\n", ok, connections, port);
  return static_cast<std::size_t>(ok) == connections ? 0 : 1;
}
