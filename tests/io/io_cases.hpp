// io_cases.hpp — I/O behaviours written once and run on every driver: the real suite runs each
// on io_uring and on epoll (tests/io/shared_cases_test.cpp), the simulator's suite inside
// simulated runs over the in-memory network and file system (sim/tests/io_api_test.cpp).
//
// Each case is a task on the current loop that answers "" when every check held, or what went
// wrong. Cases use only the public API, one loop and no real threads or clocks, so they mean the
// same in every flavor; timeouts run on the seam clock (virtual time in the simulator).
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <weft/io.hpp>
#include <weft/time.hpp>

namespace weft::io_cases {

// Where a case may create files ("" is not allowed: real runs pass a temporary directory).
using case_fn = task<std::string> (*)(std::string dir);

namespace detail {
inline std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span<const char>(s)); }
inline std::string errno_name(const std::error_code& e) { return e.message() + " (" + std::to_string(e.value()) + ")"; }

inline task<expected<tcp_stream, std::error_code>> connect_to(socket_address at) {
  co_return co_await tcp_stream::connect(at);
}

// A connected loopback pair on this loop: (accepted side, connecting side).
inline task<expected<std::pair<tcp_stream, tcp_stream>, std::error_code>> connected_pair() {
  auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
  if (!listener) co_return unexpected(listener.error());
  auto at = listener->local_address();
  if (!at) co_return unexpected(at.error());
  auto client = spawn(connect_to(*at));
  auto server = co_await listener->accept();
  if (!server) co_return unexpected(server.error());
  auto c = co_await client;
  if (!c) co_return unexpected(std::make_error_code(std::errc::operation_canceled));
  if (!*c) co_return unexpected(c->error());
  co_return std::pair<tcp_stream, tcp_stream>(std::move(*server), std::move(**c));
}
}  // namespace detail

inline task<std::string> tcp_round_trip_and_end_of_stream(std::string) {
  auto pair = co_await detail::connected_pair();
  if (!pair) co_return "connect: " + detail::errno_name(pair.error());
  auto& [server, client] = *pair;
  const std::string message = "a message crossing loopback";
  if (!co_await write_all(client, detail::bytes(message))) co_return "write_all failed";
  std::string got(message.size(), '\0');
  if (auto r = co_await read_exact(server, std::as_writable_bytes(std::span<char>(got))); !r) {
    co_return "read_exact: " + detail::errno_name(r.error());
  }
  if (got != message) co_return "read \"" + got + "\"";
  if (!co_await client.shutdown(SHUT_WR)) co_return "shutdown failed";
  std::byte b[8];
  auto end = co_await server.read(b);
  if (!end) co_return "read after shutdown: " + detail::errno_name(end.error());
  if (*end != 0) co_return "a read after the peer's shutdown found bytes";
  co_return "";
}

inline task<std::string> refused_connect_and_port_in_use(std::string) {
  auto first = tcp_listener::bind(socket_address::ipv4_loopback(0));
  if (!first) co_return "bind: " + detail::errno_name(first.error());
  const socket_address at = *first->local_address();
  auto second = tcp_listener::bind(at);
  if (second || second.error() != std::error_code(EADDRINUSE, std::system_category())) {
    co_return "a second bind of a port in use was not EADDRINUSE";
  }
  first->close();
  auto c = co_await tcp_stream::connect(at);
  if (c || c.error() != std::error_code(ECONNREFUSED, std::system_category())) {
    co_return "a connect to a closed port was not ECONNREFUSED";
  }
  co_return "";
}

inline task<std::string> a_dropped_read_loses_no_bytes(std::string) {
  auto pair = co_await detail::connected_pair();
  if (!pair) co_return "connect: " + detail::errno_name(pair.error());
  auto& [server, client] = *pair;
  std::byte buf[64];
  auto first = co_await timeout(std::chrono::milliseconds(2), server.read(buf));
  if (first) co_return "a read of a silent stream finished";
  if (!co_await write_all(client, detail::bytes("kept bytes"))) co_return "write_all failed";
  std::string got(10, '\0');
  auto r = co_await timeout(std::chrono::seconds(10), read_exact(server, std::as_writable_bytes(std::span<char>(got))));
  if (!r) co_return "the bytes never came: the dropped read lost them";
  if (!*r) co_return "read_exact: " + detail::errno_name(r->error());
  if (got != "kept bytes") co_return "read \"" + got + "\"";
  co_return "";
}

// More than one staging buffer's worth, written by write_all while the reader takes small bites
// of varying size: every read answers at most its buffer, and every byte arrives once, in order.
inline task<std::string> transfers_arrive_whole_and_in_order(std::string) {
  auto pair = co_await detail::connected_pair();
  if (!pair) co_return "connect: " + detail::errno_name(pair.error());
  auto& [server, client] = *pair;
  constexpr std::size_t total = (std::size_t{1} << 20) + 1000;
  // A period (251, prime) that no buffer size shares: a lost, repeated or reordered chunk shows.
  auto byte_at = [](std::size_t i) { return static_cast<std::byte>(i % 251); };
  std::vector<std::byte> out(total);
  for (std::size_t i = 0; i < total; ++i) out[i] = byte_at(i);
  tcp_stream& c = client;
  auto writer = spawn([&c, &out]() -> task<bool> { co_return static_cast<bool>(co_await write_all(c, out)); });
  std::vector<std::byte> in(total);
  std::size_t got = 0;
  for (std::size_t reads = 0; got < total; ++reads) {
    const std::size_t want = std::min<std::size_t>(total - got, 700 + (reads % 5) * 9000);
    auto n = co_await timeout(std::chrono::seconds(10), server.read(std::span<std::byte>(in).subspan(got, want)));
    if (!n) co_return "a read never answered, " + std::to_string(got) + " bytes in";
    if (!*n) co_return "read: " + detail::errno_name(n->error());
    if (**n == 0) co_return "end of stream after " + std::to_string(got) + " bytes";
    if (**n > want) co_return "a read answered more than its buffer";
    got += **n;
  }
  auto wrote = co_await writer;
  if (!wrote || !*wrote) co_return "write_all failed";
  for (std::size_t i = 0; i < total; ++i) {
    if (in[i] != byte_at(i)) co_return "byte " + std::to_string(i) + " is wrong";
  }
  co_return "";
}

inline task<std::string> datagrams_name_their_sender(std::string) {
  auto a = udp_socket::bind(socket_address::ipv4_loopback(0));
  auto b = udp_socket::bind(socket_address::ipv4_loopback(0));
  if (!a || !b) co_return "udp bind failed";
  if (!co_await a->send_to(detail::bytes("ping"), *b->local_address())) co_return "send_to failed";
  std::byte buf[16];
  auto got = co_await b->recv_from(buf);
  if (!got) co_return "recv_from: " + detail::errno_name(got.error());
  if (got->size != 4 || std::string(reinterpret_cast<const char*>(buf), 4) != "ping") co_return "wrong datagram";
  if (!(got->from == *a->local_address())) co_return "the sender's address is " + got->from.to_string();
  co_return "";
}

inline task<std::string> unix_pair_lines(std::string) {
  auto pair = unix_stream::pair();
  if (!pair) co_return "socketpair: " + detail::errno_name(pair.error());
  auto& [a, b] = *pair;
  if (!co_await write_all(a, detail::bytes("one\ntwo\r\nthree"))) co_return "write_all failed";
  a.close();
  line_reader lines(b);
  std::vector<std::string> got;
  for (;;) {
    auto line = co_await lines.next_line();
    if (!line) co_return "next_line: " + detail::errno_name(line.error());
    if (!*line) break;
    got.push_back(**line);
  }
  if (got != std::vector<std::string>{"one", "two", "three"}) co_return "wrong lines";
  co_return "";
}

// A strict reader answers io_errc::end_of_stream for bytes the stream ends in; the default one
// returns them as a last line.
inline task<std::string> a_strict_line_reader_rejects_a_cut_line(std::string) {
  for (const auto last : {line_reader::unterminated_line::reject, line_reader::unterminated_line::accept}) {
    auto pair = unix_stream::pair();
    if (!pair) co_return "socketpair: " + detail::errno_name(pair.error());
    auto& [a, b] = *pair;
    if (!co_await write_all(a, detail::bytes("VALUE 12\nVALUE 1"))) co_return "write_all failed";
    a.close();
    line_reader lines(b, line_reader::default_line_max, last);
    auto first = co_await lines.next_line();
    if (!first || !*first || **first != "VALUE 12") co_return "the whole line was not read";
    auto cut = co_await lines.next_line();
    if (last == line_reader::unterminated_line::reject) {
      if (cut || cut.error() != io_errc::end_of_stream) co_return "a cut line was not refused as end_of_stream";
    } else {
      if (!cut || !*cut || **cut != "VALUE 1") co_return "the default reader lost the last line";
      auto end = co_await lines.next_line();
      if (!end || *end) co_return "no end of stream after the last line";
    }
  }
  co_return "";
}

// line_max bounds every line, also one whose '\n' arrives in the same read.
inline task<std::string> a_line_past_its_limit_is_refused(std::string) {
  auto pair = unix_stream::pair();
  if (!pair) co_return "socketpair: " + detail::errno_name(pair.error());
  auto& [a, b] = *pair;
  if (!co_await write_all(a, detail::bytes("12345\n123456\n"))) co_return "write_all failed";
  line_reader lines(b, 5);
  auto fits = co_await lines.next_line();
  if (!fits || !*fits || **fits != "12345") co_return "a line of line_max bytes was not read";
  auto over = co_await lines.next_line();
  if (over || over.error() != io_errc::line_too_long) co_return "a line of line_max + 1 bytes was not refused";
  co_return "";
}

// A line read that is given up (its timeout elapsed) leaves the reader whole: the next line is
// the next line, without the chunk the dropped read had made room for.
inline task<std::string> a_dropped_line_read_leaves_the_reader_whole(std::string) {
  auto pair = unix_stream::pair();
  if (!pair) co_return "socketpair: " + detail::errno_name(pair.error());
  auto& [a, b] = *pair;
  line_reader lines(b);
  auto silent = co_await timeout(std::chrono::milliseconds(2), lines.next_line());
  if (silent) co_return "a line read of a silent stream finished";
  if (!co_await write_all(a, detail::bytes("hello\n"))) co_return "write_all failed";
  auto line = co_await timeout(std::chrono::seconds(10), lines.next_line());
  if (!line) co_return "the next line never came";
  if (!*line || !**line) co_return "next_line failed or ended";
  if (***line != "hello") co_return "next line \"" + ***line + "\" (" + std::to_string((***line).size()) + " bytes)";
  co_return "";
}

// Reads of three tasks on one stream: one in flight, the others waiting behind it. Every read
// finishes and the pieces, in the order the reads answered, are the stream's bytes in order.
inline task<std::string> reads_waiting_behind_one_in_flight_all_finish(std::string) {
  auto pair = unix_stream::pair();
  if (!pair) co_return "socketpair: " + detail::errno_name(pair.error());
  auto& [a, b] = *pair;
  std::string pieces;
  std::vector<join_handle<bool>> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(spawn([](unix_stream& s, std::string& out) -> task<bool> {
      char buf[8];
      auto n = co_await s.read(std::as_writable_bytes(std::span<char>(buf)));
      if (!n) co_return false;
      out.append(buf, *n);
      co_return true;
    }(b, pieces)));
  }
  co_await sleep(std::chrono::milliseconds(2));  // the first read is in flight, two wait
  const std::string message = "abcdefghijklmnopqrstuvwx";
  if (!co_await write_all(a, detail::bytes(message))) co_return "write_all failed";
  a.close();  // a read that finds nothing left answers the end of the stream
  for (auto& r : readers) {
    auto done = co_await timeout(std::chrono::seconds(10), std::move(r));
    if (!done) co_return "a read waiting behind another never finished";
    if (!*done || !**done) co_return "a read failed";
  }
  if (pieces.empty() || pieces != message.substr(0, pieces.size())) co_return "the reads' pieces are \"" + pieces + "\"";
  co_return "";
}

inline task<std::string> files_write_read_size_and_rename(std::string dir) {
  const std::string path = dir + "/weft-io-case", moved = path + ".moved";
  auto f = co_await file::open(path, open_options{.write = true, .create = true, .truncate = true});
  if (!f) co_return "open: " + detail::errno_name(f.error());
  if (auto w = co_await f->write(detail::bytes("hello file")); !w || *w != 10) co_return "write failed";
  if (!co_await f->sync_all()) co_return "fsync failed";
  auto size = co_await f->size();
  if (!size || *size != 10) co_return "size is not 10";
  if (!co_await f->set_len(5)) co_return "set_len failed";
  f->close();
  if (!co_await file::rename(path, moved)) co_return "rename failed";
  auto all = co_await file::read_all(moved);
  if (!all) co_return "read_all: " + detail::errno_name(all.error());
  if (std::string(reinterpret_cast<const char*>(all->data()), all->size()) != "hello") co_return "wrong content";
  if (!co_await file::remove(moved)) co_return "remove failed";
  auto gone = co_await file::open(moved);
  if (gone || gone.error() != std::error_code(ENOENT, std::system_category())) co_return "a removed file opened";
  co_return "";
}

struct named_case {
  const char* name;
  case_fn run;
};

// A read waiting on a stream that its owner then closes ends with EBADF, as a read started after
// the close does, on every driver (the real ones cancel the read; the error is the close's).
inline task<std::string> a_read_in_flight_ended_by_a_close_is_ebadf(std::string) {
  auto pair = co_await detail::connected_pair();
  if (!pair) co_return "connect: " + detail::errno_name(pair.error());
  tcp_stream& reader_side = pair->first;
  auto reader = spawn([&reader_side]() -> task<expected<std::size_t, std::error_code>> {
    std::byte buf[16];
    co_return co_await reader_side.read(buf);
  });
  co_await sleep(std::chrono::milliseconds(5));
  reader_side.close();
  auto r = co_await timeout(std::chrono::seconds(5), std::move(reader));
  if (!r || !*r) co_return "the read did not end";
  if (**r) co_return "the read returned bytes";
  if ((*r)->error() != std::error_code(EBADF, std::system_category())) {
    co_return "the read ended with " + detail::errno_name((*r)->error());
  }
  co_return "";
}

inline const std::vector<named_case>& all() {
  static const std::vector<named_case> cases = {
      {"tcp_round_trip_and_end_of_stream", &tcp_round_trip_and_end_of_stream},
      {"refused_connect_and_port_in_use", &refused_connect_and_port_in_use},
      {"a_dropped_read_loses_no_bytes", &a_dropped_read_loses_no_bytes},
      {"transfers_arrive_whole_and_in_order", &transfers_arrive_whole_and_in_order},
      {"datagrams_name_their_sender", &datagrams_name_their_sender},
      {"unix_pair_lines", &unix_pair_lines},
      {"a_strict_line_reader_rejects_a_cut_line", &a_strict_line_reader_rejects_a_cut_line},
      {"a_line_past_its_limit_is_refused", &a_line_past_its_limit_is_refused},
      {"files_write_read_size_and_rename", &files_write_read_size_and_rename},
      {"a_dropped_line_read_leaves_the_reader_whole", &a_dropped_line_read_leaves_the_reader_whole},
      {"reads_waiting_behind_one_in_flight_all_finish", &reads_waiting_behind_one_in_flight_all_finish},
      {"a_read_in_flight_ended_by_a_close_is_ebadf", &a_read_in_flight_ended_by_a_close_is_ebadf},
  };
  return cases;
}

}  // namespace weft::io_cases
