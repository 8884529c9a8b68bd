// tcp_test.cpp — TCP listeners and streams on each real driver.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <cstddef>
#include <unistd.h>
#include <cstring>
#include <sys/un.h>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <weft/cancellation.hpp>
#include <weft/io.hpp>
#include <weft/time.hpp>

#include "io_test_support.hpp"

namespace weft {
namespace {

using io_test::bytes_of;
using io_test::on_each_driver;

class tcp : public on_each_driver {};

task<expected<tcp_stream, std::error_code>> connect_task(socket_address at) {
  co_return co_await tcp_stream::connect(at);
}

// A connected pair on loopback: (server side, client side).
task<expected<std::pair<tcp_stream, tcp_stream>, std::error_code>> connected_pair() {
  auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
  if (!listener) co_return unexpected(listener.error());
  auto client_f = spawn(connect_task(*listener->local_address()));
  auto server = co_await listener->accept();
  if (!server) co_return unexpected(server.error());
  auto client = co_await client_f;
  if (!client) co_return unexpected(std::make_error_code(std::errc::operation_canceled));
  if (!*client) co_return unexpected(client->error());
  co_return std::pair<tcp_stream, tcp_stream>(std::move(*server), std::move(**client));
}

// What a 16-byte read of `s` answered when `end_it` acted while the read was in the kernel; null
// when the read never ended (or its task failed). A pause puts the read in flight: the loop
// waits, where a yield alone might leave the read queued in the driver (and `end_it` would make
// it fail at submission instead).
template <class F>
task<std::optional<expected<std::size_t, std::error_code>>> read_ended_by(tcp_stream& s, F end_it) {
  auto reader = spawn([&s]() -> task<expected<std::size_t, std::error_code>> {
    std::byte buf[16];
    co_return co_await s.read(buf);
  });
  co_await sleep(std::chrono::milliseconds(5));
  end_it();
  auto outcome = co_await timeout(io_test::guard, std::move(reader));
  if (!outcome || !*outcome) co_return std::nullopt;
  co_return std::move(**outcome);
}

task<std::string> echo_once(tcp_listener& listener) {
  auto conn = co_await listener.accept();
  if (!conn) co_return "accept: " + conn.error().message();
  std::byte buf[256];
  std::string seen;
  for (;;) {
    auto n = co_await conn->read(buf);
    if (!n) co_return "read: " + n.error().message();
    if (*n == 0) break;
    seen.append(reinterpret_cast<const char*>(buf), *n);
    auto w = co_await write_all(*conn, std::span<const std::byte>(buf, *n));
    if (!w) co_return "write: " + w.error().message();
  }
  co_return seen;
}

// Connects a pair and moves a message across it; true when the message arrived whole.
task<bool> round_trip() {
  auto pair = co_await connected_pair();
  if (!pair) co_return false;
  const std::string message = "through the ring";
  if (!co_await write_all(pair->second, bytes_of(message))) co_return false;
  std::string back(message.size(), '\0');
  if (!co_await read_exact(pair->first, std::as_writable_bytes(std::span<char>(back)))) co_return false;
  co_return back == message;
}

// A loop that always has ready work never waits in the driver; its operations must reach the
// kernel all the same (on io_uring, a queued submission is flushed by the turn's poll too).
TEST_P(tcp, operations_complete_on_a_loop_that_never_waits) {
  event_loop& l = loop();
  bool done = false;
  // A macrotask that queues itself again: every turn has one to run, so no turn waits.
  std::function<void()> again = [&] {
    if (!done) l.queue_macrotask(again);
  };
  l.queue_macrotask(again);
  l.block_on([&]() -> task<void> {
    auto moved = co_await timeout(io_test::guard, round_trip());
    done = true;
    WEFT_CO_ASSERT(moved, "the operations never completed while the loop had ready work")
    EXPECT_TRUE(*moved);
  }());
}

TEST_P(tcp, echoes_bytes_and_reads_end_of_stream_after_shutdown) {
  loop().block_on([]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, listener.error().message())
    auto at = listener->local_address();
    WEFT_CO_ASSERT(at, "")
    EXPECT_NE(at->port(), 0);
    auto server = spawn(echo_once(*listener));
    auto client = co_await tcp_stream::connect(*at);
    WEFT_CO_ASSERT(client, client.error().message())
    EXPECT_TRUE(client->set_nodelay(true));
    const std::string message = "hello, weft";
    auto w = co_await write_all(*client, bytes_of(message));
    WEFT_CO_ASSERT(w, w.error().message())
    std::string back(message.size(), '\0');
    auto r = co_await read_exact(*client, std::as_writable_bytes(std::span<char>(back)));
    WEFT_CO_ASSERT(r, r.error().message())
    EXPECT_EQ(back, message);
    auto s = co_await client->shutdown(SHUT_WR);
    WEFT_CO_ASSERT(s, s.error().message())
    std::byte extra[8];
    auto end = co_await client->read(extra);
    WEFT_CO_ASSERT(end, "")
    EXPECT_EQ(*end, 0u);  // the server saw end of stream, finished, and closed
    auto seen = co_await server;
    WEFT_CO_ASSERT(seen, "")
    EXPECT_EQ(*seen, message);
  }());
}

TEST_P(tcp, connect_to_a_closed_port_is_refused) {
  loop().block_on([]() -> task<void> {
    // Bind a port, then close it: nothing listens there afterwards.
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, "")
    const auto at = *listener->local_address();
    listener->close();
    auto client = co_await tcp_stream::connect(at);
    WEFT_CO_ASSERT(!(client), "")
    EXPECT_EQ(client.error(), std::error_code(ECONNREFUSED, std::system_category()));
  }());
}

TEST_P(tcp, a_port_in_use_is_refused_and_leaks_nothing) {
  loop().block_on([]() -> task<void> {
    auto first = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(first, "")
    const std::size_t fds = io_test::open_fds();
    auto second = tcp_listener::bind(*first->local_address());
    WEFT_CO_ASSERT(!(second), "")
    EXPECT_EQ(second.error(), std::error_code(EADDRINUSE, std::system_category()));
    EXPECT_EQ(io_test::open_fds(), fds);
    co_return;
  }());
}

TEST_P(tcp, bad_arguments_are_typed_errors) {
  loop().block_on([]() -> task<void> {
    listen_options o;
    o.backlog = 0;
    auto l = tcp_listener::bind(socket_address::ipv4_loopback(0), o);
    WEFT_CO_ASSERT(!(l), "")
    EXPECT_EQ(l.error(), std::make_error_code(std::errc::invalid_argument));
    auto u = socket_address::unix_path("/tmp/x");
    WEFT_CO_ASSERT(u, "")
    auto t = tcp_listener::bind(*u);
    WEFT_CO_ASSERT(!(t), "")
    auto c = co_await tcp_stream::connect(socket_address());
    WEFT_CO_ASSERT(!(c), "")
    EXPECT_FALSE(socket_address::parse("1.2.3.4"));
    EXPECT_FALSE(socket_address::parse("1.2.3.4:65536"));
    EXPECT_FALSE(socket_address::parse("host:80"));
    EXPECT_TRUE(socket_address::parse("[::1]:80"));
    tcp_stream closed;
    std::byte b[4];
    auto r = co_await closed.read(b);
    WEFT_CO_ASSERT(!(r), "")
    EXPECT_EQ(r.error(), std::error_code(EBADF, std::system_category()));
  }());
}

// An abstract Unix name is its exact bytes: a peer outside weft that names it the usual way
// (no terminator counted) reaches a weft listener bound to it.
TEST_P(tcp, an_abstract_unix_name_is_its_exact_bytes) {
  loop().block_on([]() -> task<void> {
    const std::string name = std::string(1, '\0') + "weft-abstract-" + std::to_string(::getpid());
    auto at = socket_address::unix_path(name);
    WEFT_CO_ASSERT(at, at.error().message())
    EXPECT_EQ(at->to_string(), "unix:@" + name.substr(1));
    auto listener = unix_listener::bind(*at);
    WEFT_CO_ASSERT(listener, listener.error().message())
    const int raw = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    WEFT_CO_ASSERT(raw >= 0, "socket")
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::memcpy(un.sun_path, name.data(), name.size());
    const int rc = ::connect(raw, reinterpret_cast<const sockaddr*>(&un),
                             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size()));
    const int error = errno;
    ::close(raw);
    EXPECT_EQ(rc, 0) << std::strerror(error);
    EXPECT_FALSE(socket_address::unix_path(std::string("a\0b", 3)));
    EXPECT_FALSE(socket_address::unix_path(std::string(108, 'p')));
    EXPECT_TRUE(socket_address::unix_path(std::string(1, '\0') + std::string(107, 'p')));
  }());
}

TEST_P(tcp, a_dropped_read_loses_no_bytes) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    std::byte buf[64];
    // Nothing was sent: the read times out and is dropped while in flight.
    auto first = co_await timeout(std::chrono::milliseconds(20), server.read(buf));
    EXPECT_FALSE(first);
    auto w = co_await write_all(client, bytes_of("after the timeout"));
    WEFT_CO_ASSERT(w, "")
    std::string got(17, '\0');
    auto r = co_await timeout(io_test::guard, read_exact(server, std::as_writable_bytes(std::span<char>(got))));
    WEFT_CO_ASSERT(r, "the bytes never came: they were lost")
    WEFT_CO_ASSERT(*r, r->error().message())
    EXPECT_EQ(got, "after the timeout");
  }());
}

TEST_P(tcp, an_aborted_reader_loses_no_bytes) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    tcp_stream& s = server;
    auto reader = spawn([&s]() -> task<std::size_t> {
      std::byte buf[64];
      auto n = co_await s.read(buf);
      co_return n ? *n : 0;
    });
    co_await yield_now();  // the reader submits its read
    reader.abort();
    co_await yield_now();
    auto w = co_await write_all(client, bytes_of("kept"));
    WEFT_CO_ASSERT(w, "")
    std::string got(4, '\0');
    auto r = co_await timeout(io_test::guard, read_exact(s, std::as_writable_bytes(std::span<char>(got))));
    WEFT_CO_ASSERT(r, "the bytes never came: they were lost")
    WEFT_CO_ASSERT(*r, r->error().message())
    EXPECT_EQ(got, "kept");
  }());
}

// The read's completion is reaped in the same turn as the write's, before the reader is polled:
// the reader is aborted holding a result it never took, and those bytes go to the next read.
TEST_P(tcp, a_reader_aborted_after_its_read_completed_loses_no_bytes) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    tcp_stream& s = server;
    auto reader = spawn([&s]() -> task<std::size_t> {
      std::byte buf[64];
      auto n = co_await s.read(buf);
      co_return n ? *n : 0;
    });
    co_await yield_now();  // the reader submits its read
    auto w = co_await write_all(client, bytes_of("late"));
    WEFT_CO_ASSERT(w, "")
    reader.abort();
    std::string got(4, '\0');
    // Bounded, so that lost bytes fail the test instead of hanging it.
    auto r = co_await timeout(io_test::guard, read_exact(s, std::as_writable_bytes(std::span<char>(got))));
    WEFT_CO_ASSERT(r, "the bytes never came: they were lost")
    WEFT_CO_ASSERT(*r, r->error().message())
    EXPECT_EQ(got, "late");
  }());
}

// A token cancelled from another thread ends a read in flight; the bytes that come later are
// read by the next read.
TEST_P(tcp, a_cancellation_token_from_another_thread_ends_a_read_and_loses_no_bytes) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    cancellation_source source;
    std::thread canceller([&source] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      source.cancel();
    });
    std::byte buf[16];
    auto first = co_await timeout(io_test::guard, with_cancellation(source.token(), server.read(buf)));
    canceller.join();
    WEFT_CO_ASSERT(first, "the cancellation never ended the read")
    WEFT_CO_ASSERT(!*first, "the read finished although nothing was sent")
    EXPECT_EQ(first->error(), cancel_error::cancelled);
    EXPECT_TRUE(source.token().is_cancelled());
    auto again = co_await with_cancellation(source.token(), server.read(buf));
    EXPECT_FALSE(again) << "a cancelled token lets nothing start";
    WEFT_CO_ASSERT(co_await write_all(client, bytes_of("after")), "")
    std::string got(5, '\0');
    auto r = co_await timeout(io_test::guard, read_exact(server, std::as_writable_bytes(std::span<char>(got))));
    WEFT_CO_ASSERT(r && *r, "the bytes were lost")
    EXPECT_EQ(got, "after");
  }());
}

TEST_P(tcp, a_dropped_accept_loses_no_connection) {
  loop().block_on([]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, "")
    auto first = co_await timeout(std::chrono::milliseconds(10), listener->accept());
    EXPECT_FALSE(first);
    auto client = co_await tcp_stream::connect(*listener->local_address());
    WEFT_CO_ASSERT(client, "")
    auto server = co_await listener->accept();
    WEFT_CO_ASSERT(server, server.error().message())
    auto w = co_await write_all(*client, bytes_of("x"));
    WEFT_CO_ASSERT(w, "")
    std::byte b[1];
    auto r = co_await read_exact(*server, b);
    WEFT_CO_ASSERT(r, "")
  }());
}

TEST_P(tcp, closing_a_stream_ends_a_read_in_flight_with_an_error) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    tcp_stream& s = pair->first;
    auto outcome = co_await read_ended_by(s, [&s] { s.close(); });
    WEFT_CO_ASSERT(outcome, "the read never ended after close")
    EXPECT_FALSE(*outcome) << "a read on a closed stream answered bytes";
  }());
}

// Closes `s` with a reset: SO_LINGER with a zero timeout makes close() send RST, not FIN.
void reset_close(tcp_stream& s) {
  const linger abort_on_close{1, 0};
  ASSERT_EQ(::setsockopt(s.native_handle(), SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close), 0);
  s.close();
}

// A reset is the peer's doing, not the program's: a read in flight when it arrives ends with
// ECONNRESET, a write after it is refused with a typed error (and no SIGPIPE ends the process).
TEST_P(tcp, a_peer_reset_ends_a_read_in_flight_and_refuses_the_next_write) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    tcp_stream& s = pair->first;
    tcp_stream& peer = pair->second;
    auto outcome = co_await read_ended_by(s, [&peer] { reset_close(peer); });
    WEFT_CO_ASSERT(outcome, "the read never ended after the peer's reset")
    WEFT_CO_ASSERT(!*outcome, "a read after a reset answered " + std::to_string(**outcome) + " bytes")
    EXPECT_EQ(outcome->error(), std::error_code(ECONNRESET, std::system_category()));
    auto w = co_await s.write(bytes_of("to nobody"));
    WEFT_CO_ASSERT(!w, "a write after a reset was accepted")
    EXPECT_TRUE(w.error() == std::error_code(EPIPE, std::system_category()) ||
                w.error() == std::error_code(ECONNRESET, std::system_category()))
        << w.error().message();
  }());
}

// A reset that arrives before the read is asked for: the read answers it at once.
TEST_P(tcp, a_read_after_a_peer_reset_is_a_typed_error) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    reset_close(client);
    co_await sleep(std::chrono::milliseconds(5));  // the RST reaches the server's socket
    std::byte buf[16];
    auto r = co_await timeout(io_test::guard, server.read(buf));
    WEFT_CO_ASSERT(r, "the read never ended")
    WEFT_CO_ASSERT(!*r, "a read after a reset answered " + std::to_string(**r) + " bytes")
    EXPECT_EQ(r->error(), std::error_code(ECONNRESET, std::system_category()));
  }());
}

// A reset met by a read whose task was aborted after the completion came (the reader never
// resumed): the reset is kept for the next read, as bytes are, not turned into an end of stream.
TEST_P(tcp, a_reset_met_by_a_dropped_read_is_the_next_reads_error) {
  loop().block_on([]() -> task<void> {
    int checked = 0;
    for (int round = 0; round < 10; ++round) {
      auto pair = co_await connected_pair();
      WEFT_CO_ASSERT(pair, pair.error().message())
      tcp_stream& s = pair->first;
      bool resumed = false;
      auto reader = spawn([&s, &resumed]() -> task<void> {
        std::byte buf[16];
        (void)co_await s.read(buf);
        resumed = true;
      });
      co_await sleep(std::chrono::milliseconds(5));  // the read is in flight
      reset_close(pair->second);
      co_await yield_now();  // its completion is reaped; the reader is queued behind this task
      if (resumed) continue;                         // the reader ran first: nothing to check
      reader.abort();
      ++checked;
      std::byte buf[16];
      auto r = co_await timeout(io_test::guard, s.read(buf));
      WEFT_CO_ASSERT(r, "the next read never ended")
      WEFT_CO_ASSERT(!*r, "the next read answered " + std::to_string(**r) + " bytes: the reset was lost")
      EXPECT_EQ(r->error(), std::error_code(ECONNRESET, std::system_category()));
    }
    EXPECT_GT(checked, 0) << "no round aborted the reader before it resumed";
  }());
}

// Any number of tasks may wait behind a read or a write in flight: every one of them finishes,
// and the bytes keep their order.
TEST_P(tcp, reads_and_writes_queued_behind_one_in_flight_all_finish) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    tcp_stream& server = pair->first;
    tcp_stream& client = pair->second;
    constexpr int waiters = 3;
    std::string pieces;
    std::vector<join_handle<bool>> readers;
    for (int i = 0; i < waiters; ++i) {
      readers.push_back(spawn([&server, &pieces]() -> task<bool> {
        char buf[8];
        auto n = co_await server.read(std::as_writable_bytes(std::span<char>(buf)));
        if (!n) co_return false;
        pieces.append(buf, *n);
        co_return true;
      }));
    }
    co_await sleep(std::chrono::milliseconds(5));  // one read in flight, two waiting behind it
    const std::string message = "abcdefghijklmnopqrstuvwx";
    WEFT_CO_ASSERT(co_await write_all(client, bytes_of(message)), "")
    for (auto& r : readers) {
      auto done = co_await timeout(io_test::guard, std::move(r));
      WEFT_CO_ASSERT(done, "a read waiting behind another never finished")
      WEFT_CO_ASSERT(*done && **done, "a read failed")
    }
    EXPECT_EQ(pieces, message.substr(0, pieces.size()));
    EXPECT_FALSE(pieces.empty());

    // Writes: more than the socket buffers hold, from three tasks, while nobody reads.
    constexpr std::size_t each = 4 << 20;
    std::vector<join_handle<bool>> writers;
    for (int i = 0; i < waiters; ++i) {
      writers.push_back(spawn([&client]() -> task<bool> {
        std::vector<std::byte> blob(each, std::byte{0x5a});
        co_return static_cast<bool>(co_await write_all(client, blob));
      }));
    }
    co_await sleep(std::chrono::milliseconds(5));
    std::vector<std::byte> sink(1 << 16);
    std::size_t received = 0;
    while (received < waiters * each) {
      auto n = co_await timeout(io_test::guard, server.read(sink));
      WEFT_CO_ASSERT(n && *n && **n > 0, "the writers stopped before every byte was written")
      received += **n;
    }
    for (auto& w : writers) {
      auto done = co_await timeout(io_test::guard, std::move(w));
      WEFT_CO_ASSERT(done, "a write waiting behind another never finished")
      WEFT_CO_ASSERT(*done && **done, "a write failed")
    }
    EXPECT_EQ(received, waiters * each);
  }());
}

// The byte `i` of the test stream: a pattern whose period (251, prime) is no buffer size, so a
// lost, repeated or reordered chunk shows.
std::byte pattern_byte(std::size_t i) { return static_cast<std::byte>(i % 251); }

// Partial transfers: a write larger than the socket can take answers a partial count, a read
// answers what has arrived (not a full buffer), and write_all / read_exact move every byte in
// order while the reader takes small bites.
TEST_P(tcp, partial_reads_and_writes_move_every_byte_in_order) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    constexpr std::size_t total = std::size_t{8} << 20;
    std::vector<std::byte> out(total);
    for (std::size_t i = 0; i < total; ++i) out[i] = pattern_byte(i);

    // Nobody reads yet: one write cannot place 8 MiB, so it answers a partial count.
    auto first = co_await timeout(io_test::guard, client.write(out));
    WEFT_CO_ASSERT(first, "a write into a full socket never answered")
    WEFT_CO_ASSERT(*first, (*first).error().message())
    const std::size_t sent = **first;
    EXPECT_GT(sent, 0u);
    EXPECT_LT(sent, total) << "8 MiB fitted in one write: the test needs a partial one";

    tcp_stream& c = client;
    auto writer = spawn([&c, &out, sent]() -> task<expected<void, std::error_code>> {
      co_return co_await write_all(c, std::span<const std::byte>(out).subspan(sent));
    });
    std::vector<std::byte> in(total);
    std::size_t got = 0;
    std::size_t reads = 0;
    while (got < total) {
      // Small bites of varying size: a read answers at most its buffer, and whatever has come.
      const std::size_t want = std::min<std::size_t>(total - got, 1000 + (reads % 7) * 3000);
      auto n = co_await timeout(io_test::guard, server.read(std::span<std::byte>(in).subspan(got, want)));
      WEFT_CO_ASSERT(n, "a read never answered with " + std::to_string(got) + " bytes in")
      WEFT_CO_ASSERT(*n, (*n).error().message())
      WEFT_CO_ASSERT(**n > 0, "end of stream after " + std::to_string(got) + " bytes")
      WEFT_CO_ASSERT(**n <= want, "a read answered more than its buffer")
      got += **n;
      ++reads;
    }
    auto wrote = co_await timeout(io_test::guard, std::move(writer));
    WEFT_CO_ASSERT(wrote && *wrote, "write_all did not finish")
    WEFT_CO_ASSERT(**wrote, (**wrote).error().message())
    for (std::size_t i = 0; i < total; ++i) {
      if (in[i] != pattern_byte(i)) {
        ADD_FAILURE() << "byte " << i << " is wrong: a chunk was lost, repeated or reordered";
        break;
      }
    }

    // A read asked for 64 KiB when 10 bytes have come answers the 10 it has.
    auto w = co_await write_all(client, bytes_of("ten bytes!"));
    WEFT_CO_ASSERT(w, "")
    std::vector<std::byte> big(64 * 1024);
    auto n = co_await timeout(io_test::guard, server.read(big));
    WEFT_CO_ASSERT(n && *n, "")
    EXPECT_EQ(**n, 10u);
  }());
}

// writev gathers its chunks in order; a gather larger than one transfer answers a partial count
// that ends inside some chunk, and the rest follows from there.
TEST_P(tcp, a_partial_writev_continues_where_it_stopped) {
  loop().block_on([]() -> task<void> {
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    auto& [server, client] = *pair;
    constexpr std::size_t chunk = 1 << 20;
    constexpr std::size_t chunks = 4;
    std::vector<std::byte> out(chunk * chunks);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = pattern_byte(i);
    std::vector<std::span<const std::byte>> parts;
    for (std::size_t k = 0; k < chunks; ++k) parts.emplace_back(std::span<const std::byte>(out).subspan(k * chunk, chunk));
    tcp_stream& c = client;
    auto writer = spawn([&c, &parts, &out]() -> task<expected<std::size_t, std::error_code>> {
      auto n = co_await c.writev(parts);
      if (!n) co_return unexpected(n.error());
      // What writev did not place goes by write_all, from the byte where it stopped.
      auto rest = co_await write_all(c, std::span<const std::byte>(out).subspan(*n));
      if (!rest) co_return unexpected(rest.error());
      co_return *n;
    });
    std::vector<std::byte> in(out.size());
    auto r = co_await timeout(io_test::guard, read_exact(server, in));
    WEFT_CO_ASSERT(r, "the bytes never all came")
    WEFT_CO_ASSERT(*r, (*r).error().message())
    auto first = co_await timeout(io_test::guard, std::move(writer));
    WEFT_CO_ASSERT(first && *first && **first, "the writer failed")
    EXPECT_GT(***first, 0u);
    EXPECT_LE(***first, out.size());
    EXPECT_TRUE(in == out) << "a gathered write lost, repeated or reordered bytes";
  }());
}

TEST_P(tcp, a_closed_listener_closes_the_connections_it_kept) {
  const std::size_t before = io_test::open_fds();
  loop().block_on([]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, "")
    // An accept dropped after its connection arrived leaves the connection with the listener.
    auto accepting = spawn([&l = *listener]() -> task<void> { (void)co_await l.accept(); });
    co_await yield_now();
    auto client = co_await tcp_stream::connect(*listener->local_address());
    WEFT_CO_ASSERT(client, "")
    accepting.abort();
    co_await yield_now();
    listener->close();
  }());
  EXPECT_EQ(io_test::open_fds(), before);
}

TEST_P(tcp, too_many_open_files_is_a_typed_error_that_leaks_nothing) {
  loop().block_on([]() -> task<void> {
    rlimit old{};
    WEFT_CO_ASSERT(::getrlimit(RLIMIT_NOFILE, &old) == 0, "")
    const std::size_t open = io_test::open_fds();
    rlimit tight = old;
    tight.rlim_cur = open + 1;  // room for one more descriptor, not two
    WEFT_CO_ASSERT(::setrlimit(RLIMIT_NOFILE, &tight) == 0, "")
    std::vector<tcp_listener> held;
    std::error_code refused;
    for (int i = 0; i < 4 && !refused; ++i) {
      auto l = tcp_listener::bind(socket_address::ipv4_loopback(0));
      if (l) {
        held.push_back(std::move(*l));
      } else {
        refused = l.error();
      }
    }
    ::setrlimit(RLIMIT_NOFILE, &old);
    EXPECT_EQ(refused, std::error_code(EMFILE, std::system_category()));
    held.clear();
    EXPECT_EQ(io_test::open_fds(), open);
  }());
}

TEST_P(tcp, connect_with_a_timeout_gives_up_with_timed_out) {
  loop().block_on([]() -> task<void> {
    // A listener whose backlog is full never completes a connect: fill it, then time out.
    listen_options o;
    o.backlog = 1;
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0), o);
    WEFT_CO_ASSERT(listener, "")
    const auto at = *listener->local_address();
    std::vector<tcp_stream> held;
    for (int i = 0; i < 64; ++i) {
      auto c = co_await tcp_stream::connect(at, std::chrono::milliseconds(50));
      if (!c) {
        EXPECT_EQ(c.error(), std::make_error_code(std::errc::timed_out)) << c.error().message();
        co_return;
      }
      held.push_back(std::move(*c));
    }
    ADD_FAILURE() << "64 connections to a backlog of 1 all completed";
  }());
}

TEST_P(tcp, destroying_the_loop_with_operations_in_flight_leaks_no_fd) {
  const std::size_t before = io_test::open_fds();
  {
    event_loop l(io_test::options_for(GetParam()));
    l.block_on([]() -> task<void> {
      auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
      EXPECT_TRUE(listener);
      auto shared = std::make_shared<tcp_listener>(std::move(*listener));
      (void)spawn([shared]() -> task<void> { (void)co_await shared->accept(); });
      auto client = co_await tcp_stream::connect(*shared->local_address());
      EXPECT_TRUE(client);
      auto c = std::make_shared<tcp_stream>(std::move(*client));
      (void)spawn([c]() -> task<void> {
        std::byte b[16];
        (void)co_await c->read(b);
      });
      co_await yield_now();
      co_await yield_now();
    }());
    EXPECT_GT(l.io_in_flight(), 0u);
  }
  EXPECT_EQ(io_test::open_fds(), before);
}

TEST_P(tcp, use_from_another_thread_is_a_usage_error) {
  loop().block_on([]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, "")
    bool refused = false;
    std::thread other([&] {
      try {
        (void)listener->local_address();
      } catch (const usage_error&) {
        refused = true;
      }
    });
    other.join();
    EXPECT_TRUE(refused);

    // Making an operation is already a use: refused before it touches the stream.
    auto pair = co_await connected_pair();
    WEFT_CO_ASSERT(pair, pair.error().message())
    tcp_stream& s = pair->first;
    int refusals = 0;
    std::thread maker([&] {
      std::byte buf[4];
      try {
        (void)s.read(buf);
      } catch (const usage_error&) {
        ++refusals;
      }
      try {
        (void)s.write(bytes_of("x"));
      } catch (const usage_error&) {
        ++refusals;
      }
    });
    maker.join();
    EXPECT_EQ(refusals, 2);
  }());
}

// A stream destroyed on another thread while a read of its loop is in flight: the close goes to
// the owner's loop, the read ends with an error, and no descriptor is left (TSan: no race).
TEST_P(tcp, a_stream_destroyed_on_another_thread_closes_on_its_loop) {
  const std::size_t before = io_test::open_fds();
  for (int round = 0; round < 20; ++round) {
    std::optional<tcp_stream> victim;
    std::atomic<bool> in_flight{false};
    std::thread destroyer([&] {
      while (!in_flight.load(std::memory_order_acquire)) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 5)));
      victim.reset();
    });
    loop().block_on([&]() -> task<void> {
      auto pair = co_await connected_pair();
      WEFT_CO_ASSERT(pair, pair.error().message())
      victim.emplace(std::move(pair->first));
      tcp_stream peer = std::move(pair->second);
      std::byte buf[16];
      auto read = victim->read(buf);  // the leaf holds its own reference to the stream's state
      auto announcer = spawn([&in_flight]() -> task<void> {
        co_await sleep(std::chrono::milliseconds(2));
        in_flight.store(true, std::memory_order_release);
      });
      auto r = co_await timeout(io_test::guard, std::move(read));
      (void)co_await announcer;
      WEFT_CO_ASSERT(r, "the read was not ended by the close from the other thread")
      EXPECT_FALSE(*r);
    }());
    destroyer.join();
  }
  loop().block_on([]() -> task<void> { co_await sleep(std::chrono::milliseconds(1)); }());
  EXPECT_EQ(io_test::open_fds(), before);
}

// A connect leaf made and dropped without being awaited, or given a token cancelled before its
// first poll, never starts: the socket it made for the connect is closed at once.
TEST_P(tcp, a_connect_that_never_starts_closes_its_socket) {
  loop().block_on([]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, listener.error().message())
    auto at = listener->local_address();
    WEFT_CO_ASSERT(at, "")
    const std::size_t before = io_test::open_fds();
    for (int i = 0; i < 10; ++i) {
      auto leaf = tcp_stream::connect(*at);  // made, never awaited
    }
    cancellation_source source;
    source.cancel();
    for (int i = 0; i < 10; ++i) {
      auto r = co_await with_cancellation(source.token(), tcp_stream::connect(*at));
      WEFT_CO_ASSERT(!r, "a connect under a cancelled token ran")
      EXPECT_EQ(r.error(), cancel_error::cancelled);
    }
    EXPECT_EQ(io_test::open_fds(), before);
  }());
}

// A leaf made ready by hand: pending until `ready`, keeping the waker it was polled with.
struct manual_leaf {
  bool* ready;
  waker* parked;
  bool poll_ready(const waker& w) {
    if (*ready) return true;
    *parked = w;
    return false;
  }
  int await_resume() const noexcept { return 42; }
};

// An operation that completed before its task was polled again answers its result even when the
// cancel came in between (its effect happened, and the caller must learn so), as under timeout;
// a token cancelled before the first poll keeps the operation from starting.
TEST_P(tcp, an_operation_completed_before_the_cancel_answers_its_result) {
  loop().block_on([]() -> task<void> {
    bool ready = false;
    waker parked;
    cancellation_source source;
    auto waiting = spawn([&]() -> task<expected<int, cancel_error>> {
      co_return co_await with_cancellation(source.token(), manual_leaf{&ready, &parked});
    });
    co_await yield_now();  // its first poll: started, pending
    ready = true;
    parked.wake();    // the operation completes...
    source.cancel();  // ...and the cancel comes before the task runs again
    auto r = co_await waiting;
    WEFT_CO_ASSERT(r, "")
    WEFT_CO_ASSERT(*r, "a completed operation was answered cancelled")
    EXPECT_EQ(**r, 42);
    bool never = false;
    auto unstarted = co_await with_cancellation(source.token(), manual_leaf{&never, &parked});
    EXPECT_FALSE(unstarted);
  }());
}

// A connection accepted for a dropped accept after which the listener is closed: nothing could
// take it, so it is closed, not kept.
TEST_P(tcp, a_connection_accepted_for_nobody_into_a_closed_listener_is_closed) {
  loop().block_on([]() -> task<void> {
    const std::size_t before = io_test::open_fds();
    {
      auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
      WEFT_CO_ASSERT(listener, listener.error().message())
      auto client = co_await tcp_stream::connect(*listener->local_address());  // waits in the backlog
      WEFT_CO_ASSERT(client, client.error().message())
      auto r = co_await timeout(std::chrono::nanoseconds(0), listener->accept());  // submitted, then dropped
      EXPECT_FALSE(r);
      listener->close();  // before the accept's completion is delivered
      co_await sleep(std::chrono::milliseconds(5));
    }
    co_await sleep(std::chrono::milliseconds(5));
    EXPECT_EQ(io_test::open_fds(), before);
  }());
}

TEST_P(tcp, creating_a_socket_outside_a_loop_is_a_usage_error) {
  EXPECT_THROW((void)tcp_listener::bind(socket_address::ipv4_loopback(0)), usage_error);
}

INSTANTIATE_TEST_SUITE_P(drivers, tcp, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll), io_test::driver_name);

}  // namespace
}  // namespace weft
