// kv_store_test.cpp — the key-value store example (docs/examples/kv_store.hpp) on each real
// driver: round trips, recovery after a stop and after a torn or corrupt tail, the graceful
// stop's drain, malformed requests, and the known-bad ack_before_fsync variant still serving.
// Server and clients share one loop; the server's tasks run beside the test's own.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/time.hpp>

#include "io_test_support.hpp"
#include "kv_store.hpp"

namespace weft {
namespace {

using kv_example::reply;
using serve_handle = join_handle<expected<void, std::error_code>>;

// Attempts at catching a PUT between its read and its answer; each very likely succeeds.
constexpr int in_flight_attempts = 20;

class kv_store : public io_test::on_each_driver {
 protected:
  void SetUp() override {
    on_each_driver::SetUp();
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      if (c == '/') c = '_';  // the parameter's suffix: a flat file name
    }
    path_ = ::testing::TempDir() + "weft-kv-" + std::to_string(::getpid()) + "-" + name + ".log";
    ::unlink(path_.c_str());
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    on_each_driver::TearDown();
  }
  kv_example::server_config config(bool ack_before_fsync = false) const {
    return {.address = socket_address::ipv4_loopback(0), .log_path = path_, .ack_before_fsync = ack_before_fsync};
  }
  std::string path_;
};

// A server opened on this loop and serving in a task of its own, and a client connected to it.
struct running {
  kv_example::server srv;
  serve_handle serving;
  socket_address at;
  kv_example::client kv;
};

task<std::optional<running>> start(kv_example::server_config cfg) {
  auto opened = co_await kv_example::server::open(std::move(cfg));
  if (!opened) {
    ADD_FAILURE() << "open: " << opened.error().message();
    co_return std::nullopt;
  }
  kv_example::server srv = std::move(*opened);
  serve_handle serving = spawn(srv.serve());
  const socket_address at = socket_address::ipv4_loopback(srv.local_address().port());
  auto kv = co_await kv_example::client::connect(at);
  if (!kv) {
    ADD_FAILURE() << "connect: " << kv.error().message();
    co_return std::nullopt;
  }
  co_return running{std::move(srv), std::move(serving), at, std::move(*kv)};
}

// Requests the stop and waits for it; true when serve() reports a clean one.
task<bool> stop(running& r) {
  r.srv.request_stop();
  co_await r.srv.stopped();
  auto served = co_await r.serving;
  co_return served && *served;
}

// Lets the loop run (I/O and timers included) until done() holds; false after io_test::guard.
// A yield would not do: a task yielding in a loop keeps the checkpoint busy, and no I/O completes.
template <class F>
task<bool> settle(F done) {
  const instant deadline = platform::clock::now() + io_test::guard;
  while (!done()) {
    if (platform::clock::now() > deadline) co_return false;
    co_await sleep(std::chrono::microseconds(1));
  }
  co_return true;
}

task<std::uint64_t> file_size(std::string path) {
  auto f = co_await file::open(std::move(path));
  if (!f) co_return 0;
  auto size = co_await f->size();
  co_return size ? *size : 0;
}

task<bool> append_bytes(std::string path, std::string bytes) {
  auto f = co_await file::open(path, open_options{.read = true, .write = true});
  if (!f) co_return false;
  auto size = co_await f->size();
  if (!size) co_return false;
  auto w = co_await kv_example::detail::write_fully(*f, bytes, *size);
  co_return !w;
}

reply ok() { return {reply::kind::ok, {}}; }
reply none() { return {reply::kind::none, {}}; }
reply value(std::string v) { return {reply::kind::value, std::move(v)}; }
reply err(std::string why) { return {reply::kind::error, std::move(why)}; }

// What a request answered, as text for EXPECT_EQ's message.
std::string show(const expected<reply, std::error_code>& r) {
  if (!r) return "error: " + r.error().message();
  const reply& v = r.value();
  switch (v.what) {
    case reply::kind::ok: return "OK";
    case reply::kind::none: return "NONE";
    case reply::kind::value: return "VALUE " + v.text;
    case reply::kind::error: return "ERR " + v.text;
  }
  return "?";
}
std::string show(const reply& r) { return show(expected<reply, std::error_code>(r)); }

#define EXPECT_REPLY(call, expected_reply) EXPECT_EQ(show(co_await (call)), show(expected_reply))

TEST_P(kv_store, puts_and_gets_round_trip) {
  loop().block_on([&]() -> task<void> {
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_REPLY(r->kv.get("a"), none());
    EXPECT_REPLY(r->kv.put("a", "1"), ok());
    EXPECT_REPLY(r->kv.get("a"), value("1"));
    EXPECT_REPLY(r->kv.put("a", "2"), ok());
    EXPECT_REPLY(r->kv.put("b", "x=y,z"), ok());
    EXPECT_REPLY(r->kv.get("a"), value("2"));
    EXPECT_REPLY(r->kv.get("b"), value("x=y,z"));
    EXPECT_EQ(r->srv.stats().records, 3u);
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, a_restart_recovers_every_acknowledged_put) {
  loop().block_on([&]() -> task<void> {
    {
      auto r = co_await start(config());
      WEFT_CO_ASSERT(r, "")
      for (int i = 0; i < 20; ++i) EXPECT_REPLY(r->kv.put("k" + std::to_string(i % 7), "v" + std::to_string(i)), ok());
      EXPECT_TRUE(co_await stop(*r));
    }
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_EQ(r->srv.recovered().records, 20u);
    EXPECT_EQ(r->srv.recovered().discarded_bytes, 0u);
    EXPECT_EQ(co_await file_size(path_), r->srv.recovered().valid_bytes);
    for (int k = 0; k < 7; ++k) {
      const int last = k + 7 * ((19 - k) / 7);  // the last i with i % 7 == k
      EXPECT_REPLY(r->kv.get("k" + std::to_string(k)), value("v" + std::to_string(last)));
    }
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, a_torn_tail_is_cut_and_later_puts_follow_the_valid_prefix) {
  loop().block_on([&]() -> task<void> {
    {
      auto r = co_await start(config());
      WEFT_CO_ASSERT(r, "")
      EXPECT_REPLY(r->kv.put("x", "1"), ok());
      EXPECT_REPLY(r->kv.put("y", "2"), ok());
      EXPECT_TRUE(co_await stop(*r));
    }
    const std::uint64_t valid = co_await file_size(path_);
    const std::string torn = kv_example::encode_record("z", "lost-in-the-crash");
    WEFT_CO_ASSERT(co_await append_bytes(path_, torn.substr(0, torn.size() / 2)), "")
    {
      auto r = co_await start(config());
      WEFT_CO_ASSERT(r, "")
      EXPECT_EQ(r->srv.recovered().records, 2u);
      EXPECT_EQ(r->srv.recovered().valid_bytes, valid);
      EXPECT_EQ(r->srv.recovered().discarded_bytes, torn.size() / 2);
      EXPECT_EQ(co_await file_size(path_), valid);
      EXPECT_REPLY(r->kv.get("z"), none());
      EXPECT_REPLY(r->kv.put("w", "4"), ok());
      EXPECT_TRUE(co_await stop(*r));
    }
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_EQ(r->srv.recovered().records, 3u);
    EXPECT_EQ(r->srv.recovered().discarded_bytes, 0u);
    EXPECT_REPLY(r->kv.get("x"), value("1"));
    EXPECT_REPLY(r->kv.get("w"), value("4"));
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, recovery_stops_at_the_first_corrupt_record) {
  loop().block_on([&]() -> task<void> {
    const std::string first = kv_example::encode_record("a", "1");
    std::string corrupt = kv_example::encode_record("b", "2");
    corrupt.back() ^= 0x01;  // a flipped bit in the value: the checksum no longer matches
    const std::string after = kv_example::encode_record("c", "3");
    {
      auto created = co_await file::open(path_, open_options{.read = false, .write = true, .create = true});
      WEFT_CO_ASSERT(created, "")
    }
    WEFT_CO_ASSERT(co_await append_bytes(path_, first + corrupt + after), "")
    auto log = co_await kv_example::recover(path_);
    WEFT_CO_ASSERT(log, log.error().message())
    EXPECT_EQ(log->report.records, 1u);
    EXPECT_EQ(log->report.valid_bytes, first.size());
    EXPECT_EQ(log->report.discarded_bytes, corrupt.size() + after.size());
    EXPECT_EQ(log->data.size(), 1u);
    EXPECT_EQ(log->data["a"], "1");
    log->log.close();
    EXPECT_EQ(co_await file_size(path_), first.size());
  }());
}

TEST_P(kv_store, a_missing_log_is_an_empty_store) {
  loop().block_on([&]() -> task<void> {
    auto log = co_await kv_example::recover(path_);
    WEFT_CO_ASSERT(log, log.error().message())
    EXPECT_EQ(log->report.records, 0u);
    EXPECT_EQ(log->report.valid_bytes, 0u);
    EXPECT_TRUE(log->data.empty());
    log->log.close();
  }());
}

TEST_P(kv_store, malformed_requests_answer_err_and_the_connection_goes_on) {
  loop().block_on([&]() -> task<void> {
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_REPLY(r->kv.request(""), err("empty request"));
    EXPECT_REPLY(r->kv.request("DELETE a"), err("unknown command"));
    EXPECT_REPLY(r->kv.request("put a 1"), err("unknown command"));
    EXPECT_REPLY(r->kv.request("PUT a"), err("usage: PUT <key> <value>"));
    EXPECT_REPLY(r->kv.request("PUT a 1 2"), err("usage: PUT <key> <value>"));
    EXPECT_REPLY(r->kv.request("PUT  a 1"), err("usage: PUT <key> <value>"));
    EXPECT_REPLY(r->kv.request("PUT a "), err("bad value"));
    EXPECT_REPLY(r->kv.request("GET"), err("usage: GET <key>"));
    EXPECT_REPLY(r->kv.request("GET a b"), err("usage: GET <key>"));
    EXPECT_REPLY(r->kv.request("GET a\tb"), err("bad key"));
    EXPECT_REPLY(r->kv.request("PUT " + std::string(kv_example::key_max + 1, 'k') + " 1"), err("key too long"));
    EXPECT_REPLY(r->kv.request("PUT a " + std::string(kv_example::value_max + 1, 'v')), err("value too long"));
    EXPECT_REPLY(r->kv.put(std::string(kv_example::key_max, 'k'), std::string(kv_example::value_max, 'v')), ok());
    EXPECT_REPLY(r->kv.get(std::string(kv_example::key_max, 'k')), value(std::string(kv_example::value_max, 'v')));
    // The client refuses what the protocol cannot carry, without a round trip.
    auto spaced = co_await r->kv.put("a b", "1");
    EXPECT_EQ(show(spaced), show(unexpected(std::make_error_code(std::errc::invalid_argument))));
    EXPECT_REPLY(r->kv.put("a", "1"), ok());
    // A line past the limit is refused and its connection closed.
    EXPECT_REPLY(r->kv.request(std::string(kv_example::request_line_max + 10, 'x')), err("line too long"));
    auto after = co_await r->kv.get("a");
    EXPECT_FALSE(after) << show(after);
    EXPECT_EQ(r->srv.stats().records, 2u);
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, a_request_its_client_ends_inside_is_not_applied) {
  loop().block_on([&]() -> task<void> {
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    auto raw = co_await tcp_stream::connect(r->at);
    WEFT_CO_ASSERT(raw, "connect: " << raw.error().message())
    EXPECT_TRUE(co_await write_all(*raw, kv_example::detail::as_bytes("PUT a 123\n")));
    std::byte answer[3];
    EXPECT_TRUE(co_await read_exact(*raw, answer));
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(answer), 3), "OK\n");
    // The next PUT ends inside its line: "PUT a 12" must not be stored for it.
    EXPECT_TRUE(co_await write_all(*raw, kv_example::detail::as_bytes("PUT a 12")));
    raw->close();
    EXPECT_TRUE(co_await settle([&] { return r->srv.stats().connections == 1; }));
    EXPECT_REPLY(r->kv.get("a"), value("123"));
    EXPECT_EQ(r->srv.stats().records, 1u);
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, a_reply_its_server_ends_inside_is_an_error) {
  loop().block_on([&]() -> task<void> {
    auto listener = tcp_listener::bind(socket_address::ipv4_loopback(0));
    WEFT_CO_ASSERT(listener, "bind: " << listener.error().message())
    const socket_address at = *listener->local_address();
    // A server that dies while it answers: "VALUE 123\n" reaches the client as "VALUE 12".
    auto cut_server = spawn([](tcp_listener& l) -> task<void> {
      auto s = co_await l.accept();
      if (!s) co_return;
      line_reader requests(*s);
      (void)co_await requests.next_line();
      (void)co_await write_all(*s, kv_example::detail::as_bytes("VALUE 12"));
      s->close();
    }(*listener));
    auto kv = co_await kv_example::client::connect(at);
    WEFT_CO_ASSERT(kv, "connect: " << kv.error().message())
    auto got = co_await kv->get("a");
    EXPECT_EQ(show(got), show(unexpected(make_error_code(io_errc::end_of_stream))));
    EXPECT_TRUE(co_await cut_server);
  }());
}

TEST_P(kv_store, a_put_in_flight_at_the_stop_is_answered_and_durable) {
  loop().block_on([&]() -> task<void> {
    int caught = 0;
    std::vector<std::string> acknowledged;
    for (int attempt = 0; attempt < in_flight_attempts && caught == 0; ++attempt) {
      auto r = co_await start(config());
      WEFT_CO_ASSERT(r, "")
      auto busy = co_await kv_example::client::connect(r->at);
      WEFT_CO_ASSERT(busy, "")
      const std::string key = "late" + std::to_string(attempt);
      auto put = spawn(busy->put(key, "1"));
      const kv_example::server& srv = r->srv;
      WEFT_CO_ASSERT(co_await settle([&] { return srv.stats().puts_waiting == 1 || put.is_finished(); }), "")
      if (srv.stats().puts_waiting == 1) {
        ++caught;  // read by the server, not yet answered: the stop must let it finish
        r->srv.request_stop();
      }
      auto answered = co_await put;
      WEFT_CO_ASSERT(answered && *answered, "")
      EXPECT_EQ(show(**answered), show(ok()));
      acknowledged.push_back(key);
      EXPECT_TRUE(co_await stop(*r));
      // The idle connection was closed, the busy one after its answer, the listener too.
      EXPECT_FALSE(co_await r->kv.get(key));
      EXPECT_FALSE(co_await busy->get(key));
      EXPECT_FALSE(co_await kv_example::client::connect(r->at));
    }
    EXPECT_EQ(caught, 1) << "no attempt caught a PUT in flight";
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    for (const std::string& key : acknowledged) EXPECT_REPLY(r->kv.get(key), value("1")) << key;
    EXPECT_TRUE(co_await stop(*r));
  }());
}

// Writers PUT without pause while the stop lands among them: whatever was answered OK is there
// after the restart; the rest were answered ERR or saw their connection close.
task<void> keep_putting(socket_address at, int writer, std::vector<std::string>& acknowledged) {
  auto kv = co_await kv_example::client::connect(at);
  if (!kv) co_return;
  for (int i = 0;; ++i) {
    const std::string key = "w" + std::to_string(writer) + "-" + std::to_string(i);
    auto put = co_await kv->put(key, "v");
    if (!put || put->what != reply::kind::ok) co_return;
    acknowledged.push_back(key);
  }
}

TEST_P(kv_store, a_stop_among_busy_writers_loses_no_acknowledged_put) {
  constexpr int writers = 6;
  constexpr std::size_t acknowledged_before_stop = 50;
  loop().block_on([&]() -> task<void> {
    std::vector<std::string> acknowledged;
    {
      auto r = co_await start(config());
      WEFT_CO_ASSERT(r, "")
      std::vector<join_handle<void>> running;
      for (int w = 0; w < writers; ++w) running.push_back(spawn(keep_putting(r->at, w, acknowledged)));
      EXPECT_TRUE(co_await settle([&] { return acknowledged.size() >= acknowledged_before_stop; }));
      r->srv.request_stop();
      for (auto& h : running) (void)co_await h;
      EXPECT_TRUE(co_await stop(*r));
      WEFT_CO_ASSERT(acknowledged.size() >= acknowledged_before_stop, "")
      EXPECT_EQ(r->srv.stats().records, acknowledged.size());
      std::printf("%zu PUTs acknowledged in %llu group commits\n", acknowledged.size(),
                  static_cast<unsigned long long>(r->srv.stats().batches));
    }
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_EQ(r->srv.recovered().records, acknowledged.size());
    for (const std::string& key : acknowledged) EXPECT_REPLY(r->kv.get(key), value("v")) << key;
    EXPECT_TRUE(co_await stop(*r));
  }());
}

TEST_P(kv_store, the_ack_before_fsync_variant_still_serves_and_recovers_after_a_clean_stop) {
  loop().block_on([&]() -> task<void> {
    {
      auto r = co_await start(config(/*ack_before_fsync=*/true));
      WEFT_CO_ASSERT(r, "")
      EXPECT_REPLY(r->kv.put("a", "1"), ok());
      EXPECT_REPLY(r->kv.put("b", "2"), ok());
      EXPECT_REPLY(r->kv.get("a"), value("1"));
      EXPECT_TRUE(co_await stop(*r));
    }
    auto r = co_await start(config(/*ack_before_fsync=*/true));
    WEFT_CO_ASSERT(r, "")
    EXPECT_EQ(r->srv.recovered().records, 2u);
    EXPECT_REPLY(r->kv.get("b"), value("2"));
    EXPECT_TRUE(co_await stop(*r));
  }());
}

// A host that dies stops the server's tasks where they stand: serve() aborted still closes the
// log, the listener and every connection (the simulator's disk crash wants no file left open),
// and a PUT it had not committed is never acknowledged.
TEST_P(kv_store, an_aborted_serve_closes_every_descriptor_and_completes_stopped) {
  const std::size_t before = io_test::open_fds();
  loop().block_on([&]() -> task<void> {
    auto r = co_await start(config());
    WEFT_CO_ASSERT(r, "")
    EXPECT_REPLY(r->kv.put("a", "1"), ok());
    auto busy = co_await kv_example::client::connect(r->at);
    WEFT_CO_ASSERT(busy, "")
    auto put = spawn(busy->put("b", "2"));
    const kv_example::server& srv = r->srv;
    WEFT_CO_ASSERT(co_await settle([&] { return srv.stats().puts_waiting == 1 || put.is_finished(); }), "")
    const bool in_flight = srv.stats().puts_waiting == 1;
    r->serving.abort();
    co_await r->srv.stopped();
    auto answered = co_await put;
    WEFT_CO_ASSERT(answered, "")
    // Caught before its commit, the PUT is never acknowledged: nothing will make it durable.
    if (in_flight) EXPECT_NE(show(*answered), show(ok()));
    // Every connection's task ends, the one that waited for a commit included.
    EXPECT_TRUE(co_await settle([&] { return srv.stats().connections == 0; }));
    EXPECT_FALSE(co_await r->kv.get("a"));
    r->kv.close();
    busy->close();
    EXPECT_TRUE(co_await settle([&] { return io_test::open_fds() == before; })) << io_test::open_fds() << " fds, " << before
                                                                                  << " before";
  }());
}

INSTANTIATE_TEST_SUITE_P(drivers, kv_store, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll),
                         io_test::driver_name);

}  // namespace
}  // namespace weft
