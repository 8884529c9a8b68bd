// weft-echo-server — the tcp_echo scenario's server on weft: a runtime of --threads workers, and
// on each worker one SO_REUSEPORT listener on 127.0.0.1:P (the kernel spreads connections over
// them) whose accept loop spawns each connection's task on that same worker; a task never
// migrates, so a connection is served by the worker that accepted it, with no cross-thread
// hand-off. Each connection's task reads into a buffer and writes back what it read
// (weft::write_all) until the peer closes. It runs until killed (compare.sh sends SIGTERM).
//
//   weft-echo-server --port P [--threads N]     (echo_server_args.hpp)
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "echo_server_args.hpp"

namespace {

weft::task<void> serve(weft::tcp_stream stream) {
  std::vector<std::byte> buffer(bench::echo_buffer_bytes);
  for (;;) {
    weft::expected<std::size_t, std::error_code> n = co_await stream.read(std::span<std::byte>(buffer));
    if (!n || *n == 0) co_return;  // a reset or the end of stream: the client is done
    weft::expected<void, std::error_code> sent =
        co_await weft::write_all(stream, std::span<const std::byte>(buffer.data(), *n));
    if (!sent) co_return;
  }
}

// One worker's listener and accept loop. The listener is made here, on the worker that uses it
// (an I/O object belongs to the loop it was made on).
weft::task<void> accept_loop(weft::socket_address at) {
  weft::expected<weft::tcp_listener, std::error_code> listener =
      weft::tcp_listener::bind(at, weft::listen_options{.reuse_port = true, .backlog = bench::echo_backlog});
  if (!listener) {
    std::fprintf(stderr, "weft-echo-server: listen: %s\n", listener.error().message().c_str());
    std::exit(1);
  }
  weft::scheduler& here = weft::builtins::current().scheduler();  // spawn() lands on this worker
  for (;;) {
    weft::expected<weft::tcp_stream, std::error_code> stream = co_await listener->accept();
    if (!stream) {
      std::fprintf(stderr, "weft-echo-server: accept: %s\n", stream.error().message().c_str());
      continue;
    }
    (void)stream->set_nodelay(true);  // best effort, as in the peers
    here.spawn([s = std::move(*stream)]() mutable { return serve(std::move(s)); }).detach();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bench::echo_server_args a = bench::parse_echo_server_args(argc, argv, "weft-echo-server");
  const std::string text = "127.0.0.1:" + std::to_string(a.port);
  weft::expected<weft::socket_address, std::error_code> at = weft::socket_address::parse(text);
  if (!at) {
    std::fprintf(stderr, "weft-echo-server: %s: %s\n", text.c_str(), at.error().message().c_str());
    return 1;
  }
  weft::runtime rt = weft::runtime::builder().workers(a.threads).build();
  // The workers bind within moments of each other, long before compare.sh, which waits for the
  // port to answer, has started the client.
  std::vector<weft::join_handle<void>> loops;
  for (unsigned i = 0; i < a.threads; ++i) {
    loops.push_back(rt.worker_scheduler(i).spawn([at = *at] { return accept_loop(at); }));
  }
  for (auto& h : loops) (void)h.join();  // the loops never end; the process is killed
}
