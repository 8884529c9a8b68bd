// server_soak_test.cpp — a server that runs for days stays in bounded memory: thousands of
// connection lifetimes on one loop (echoes, clients that hang up without reading, reads given up
// by a timeout) leave the heap where a few hundred left it, and every descriptor closed.
//
// Its own executable: it replaces the global operator new/delete to count live heap bytes (the
// runtime's block recycler allocates through them too, so its bounded caches are counted).
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/time.hpp>

#include "echo_service.hpp"
#include "io_test_support.hpp"

namespace {
std::atomic<std::int64_t> live_heap_bytes{0};

void* counted_new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  // relaxed: a statistic read by the test's own thread after the work it measures.
  live_heap_bytes.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  return p;
}
void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  live_heap_bytes.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

// noinline: see tools/bench/bench_alloc_probe.hpp (g++'s false -Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(std::size_t n) { return counted_new(n); }
[[gnu::noinline]] void* operator new[](std::size_t n) { return counted_new(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { counted_delete(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { counted_delete(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }

namespace weft {
namespace {

class server_soak : public io_test::on_each_driver {};

// Connections per phase: the warm-up fills every cache and high-water mark; the measured phase
// must then add nothing that stays. A leak of 8 bytes per connection over the measured phase is
// well above the allowance.
constexpr std::size_t warm_up_connections = 500;
constexpr std::size_t measured_connections = 5'000;
constexpr std::int64_t allowance_bytes = 32 * 1024;

// Connection c's shape: most converse (write, read the echo, end the stream); every 7th hangs up
// right after writing, without reading (the server's write may meet a reset); every 11th first
// gives up a read by a timeout while nothing has come, then converses.
task<std::string> one_connection(std::uint16_t port, std::size_t c) {
  const std::string message = "soak " + std::to_string(c);
  if (c % 7 == 0) {
    auto s = co_await tcp_stream::connect(socket_address::ipv4_loopback(port));
    if (!s) co_return "connect: " + s.error().message();
    if (!co_await write_all(*s, std::as_bytes(std::span<const char>(message)))) co_return "write";
    co_return "";  // closed here, unread
  }
  if (c % 11 == 0) {
    auto s = co_await tcp_stream::connect(socket_address::ipv4_loopback(port));
    if (!s) co_return "connect: " + s.error().message();
    std::byte b[8];
    if (co_await timeout(std::chrono::microseconds(200), s->read(b))) co_return "a read of a silent stream finished";
    if (!co_await write_all(*s, std::as_bytes(std::span<const char>(message)))) co_return "write";
    std::string back(message.size(), '\0');
    auto r = co_await timeout(io_test::guard, read_exact(*s, std::as_writable_bytes(std::span<char>(back))));
    if (!r || !*r || back != message) co_return "no echo after a dropped read";
    co_return "";
  }
  echo_example::conversation talk;
  co_await echo_example::converse(port, {message}, talk);
  co_return talk.echoed() ? "" : "connection " + std::to_string(c) + " was not echoed";
}

// The example's accept loop, on this loop (the example's own spawns through a runtime worker's
// builtins): each accepted connection is served by echo_example::serve in a task of its own.
task<void> accept_here(tcp_listener listener) {
  for (;;) {
    auto stream = co_await listener.accept();
    if (!stream) continue;
    spawn([s = std::move(*stream)]() mutable { return echo_example::serve(std::move(s)); }).detach();
  }
}

// Runs `count` connections one after another, from `first`; "" or the first failure.
task<std::string> connections(std::uint16_t port, std::size_t first, std::size_t count) {
  for (std::size_t c = first; c < first + count; ++c) {
    std::string failure = co_await one_connection(port, c);
    if (!failure.empty()) co_return failure;
  }
  co_return "";
}

TEST_P(server_soak, thousands_of_connections_leave_heap_and_descriptors_where_they_were) {
  const std::size_t fds_before = io_test::open_fds();
  std::int64_t after_warm_up = 0;
  std::int64_t after_measured = 0;
  loop().block_on([&]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, listener.error().message())
    const std::uint16_t port = listener->local_address()->port();
    auto server = spawn([l = std::move(*listener)]() mutable { return accept_here(std::move(l)); });
    std::string failure = co_await connections(port, 0, warm_up_connections);
    WEFT_CO_ASSERT(failure.empty(), failure)
    co_await sleep(std::chrono::milliseconds(20));  // the server's last handlers finish
    after_warm_up = live_heap_bytes.load(std::memory_order_relaxed);
    failure = co_await connections(port, warm_up_connections, measured_connections);
    WEFT_CO_ASSERT(failure.empty(), failure)
    co_await sleep(std::chrono::milliseconds(20));
    after_measured = live_heap_bytes.load(std::memory_order_relaxed);
    server.abort();  // the accept loop runs forever: stop it, which closes the listener
    (void)co_await server;
  }());
  EXPECT_LT(after_measured - after_warm_up, allowance_bytes)
      << measured_connections << " connections left " << (after_measured - after_warm_up)
      << " bytes more on the heap than the warm-up's " << warm_up_connections << " did";
  EXPECT_EQ(io_test::open_fds(), fds_before) << "a descriptor outlived its connection";
}

INSTANTIATE_TEST_SUITE_P(drivers, server_soak, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                         io_test::driver_name);

}  // namespace
}  // namespace weft
