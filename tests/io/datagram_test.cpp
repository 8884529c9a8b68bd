// datagram_test.cpp — UDP and Unix-domain datagram sockets on each real driver.
#include <cerrno>
#include <chrono>
#include <span>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/time.hpp>

#include "io_test_support.hpp"

namespace weft {
namespace {

using io_test::bytes_of;

class datagrams : public io_test::on_each_driver {};

std::string text_of(const std::byte* data, std::size_t n) { return std::string(reinterpret_cast<const char*>(data), n); }

TEST_P(datagrams, udp_send_to_and_recv_from_name_the_sender) {
  loop().block_on([]() -> task<void> {
    auto a = udp_socket::bind(socket_address::ipv4_loopback(0));
    auto b = udp_socket::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(a && b, "")
    auto sent = co_await a->send_to(bytes_of("ping"), *b->local_address());
    WEFT_CO_ASSERT(sent, sent.error().message())
    EXPECT_EQ(*sent, 4u);
    std::byte buf[16];
    auto got = co_await b->recv_from(buf);
    WEFT_CO_ASSERT(got, got.error().message())
    EXPECT_EQ(text_of(buf, got->size), "ping");
    EXPECT_EQ(got->from, *a->local_address());
    // Connected: send/recv without addresses; a truncated datagram fills the buffer.
    WEFT_CO_ASSERT(co_await a->connect(*b->local_address()), "")
    WEFT_CO_ASSERT(co_await a->send(bytes_of("a longer datagram")), "")
    std::byte small[4];
    auto part = co_await b->recv(small);
    WEFT_CO_ASSERT(part, "")
    EXPECT_EQ(text_of(small, part->size), "a lo");
  }());
}

TEST_P(datagrams, a_dropped_receive_loses_no_datagram) {
  loop().block_on([]() -> task<void> {
    auto a = udp_socket::bind(socket_address::ipv4_loopback(0));
    auto b = udp_socket::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(a && b, "")
    std::byte buf[16];
    auto first = co_await timeout(std::chrono::milliseconds(10), b->recv_from(buf));
    EXPECT_FALSE(first);
    WEFT_CO_ASSERT(co_await a->send_to(bytes_of("kept"), *b->local_address()), "")
    auto got = co_await timeout(io_test::guard, b->recv_from(buf));
    WEFT_CO_ASSERT(got, "the datagram never came")
    WEFT_CO_ASSERT(*got, "")
    EXPECT_EQ(text_of(buf, (*got)->size), "kept");
  }());
}

TEST_P(datagrams, unix_datagrams_reach_a_bound_path) {
  const std::string path = ::testing::TempDir() + "weft-dgram-" + std::to_string(::getpid());
  ::unlink(path.c_str());
  loop().block_on([&]() -> task<void> {
    auto at = socket_address::unix_path(path);
    WEFT_CO_ASSERT(at, "")
    auto server = unix_datagram::bind(*at);
    WEFT_CO_ASSERT(server, server.error().message())
    auto client = unix_datagram::unbound();
    WEFT_CO_ASSERT(client, "")
    WEFT_CO_ASSERT(co_await client->send_to(bytes_of("over unix"), *at), "")
    std::byte buf[32];
    auto got = co_await server->recv_from(buf);
    WEFT_CO_ASSERT(got, "")
    EXPECT_EQ(text_of(buf, got->size), "over unix");
    auto wrong = udp_socket::bind(*at);
    WEFT_CO_ASSERT(!wrong, "")
    // In the system category, as the OS would answer: equal to the errc value and to the errno.
    EXPECT_EQ(wrong.error(), std::error_code(EAFNOSUPPORT, std::system_category()));
    EXPECT_EQ(wrong.error(), std::errc::address_family_not_supported);
    udp_socket closed;
    auto r = co_await closed.recv_from(buf);
    WEFT_CO_ASSERT(!r, "")
    EXPECT_EQ(r.error(), std::error_code(EBADF, std::system_category()));
  }());
  ::unlink(path.c_str());
}

// A receive into an empty span takes one datagram and reports no bytes (the sanitizer build
// checks that no null pointer reaches memcpy on the way, for a fresh receive and a kept one).
TEST_P(datagrams, a_receive_into_an_empty_span_takes_a_datagram) {
  loop().block_on([]() -> task<void> {
    auto a = udp_socket::bind(socket_address::ipv4_loopback(0));
    auto b = udp_socket::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(a && b, "")
    auto to = b->local_address();
    WEFT_CO_ASSERT(to, "")
    WEFT_CO_ASSERT(co_await a->send_to({}, *to), "")
    auto empty = co_await timeout(io_test::guard, b->recv_from(std::span<std::byte>()));
    WEFT_CO_ASSERT(empty && *empty, "no empty datagram arrived")
    EXPECT_EQ((*empty)->size, 0u);
    // A receive dropped by its timeout keeps what arrives for the next one, here an empty span.
    auto dropped = co_await timeout(std::chrono::milliseconds(5), b->recv_from(std::span<std::byte>()));
    WEFT_CO_ASSERT(!dropped, "a receive completed with nothing sent")
    WEFT_CO_ASSERT(co_await a->send_to(bytes_of("kept"), *to), "")
    auto kept = co_await timeout(io_test::guard, b->recv_from(std::span<std::byte>()));
    WEFT_CO_ASSERT(kept && *kept, "the kept datagram was not served")
    EXPECT_EQ((*kept)->size, 0u);
  }());
}

INSTANTIATE_TEST_SUITE_P(drivers, datagrams, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                         io_test::driver_name);

}  // namespace
}  // namespace weft
