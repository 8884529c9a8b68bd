// The sim flavor's driver over the simulated kernel: TCP, UDP and AF_UNIX between simulated
// threads, the in-memory file system, Linux's errors, the I/O faults, cancel and reap_all, and
// determinism. Each test runs a scenario body inside a simulation and checks what it recorded.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

#include "io_support.hpp"

namespace {

using namespace weft::sim::io_test;
using weft::platform::fault;

weft::sim::run_result run_body(void (*body)(weft::sim::context&), std::uint64_t seed,
                               const weft::sim::options& o = {}) {
  const weft::sim::scenario s{"io_test", "", body, {}};
  return weft::sim::run(s, seed, o);
}

std::string first_failure(const weft::sim::run_result& r) { return r.failures.empty() ? "" : r.failures.front(); }

weft::sim::options with_faults(std::initializer_list<std::pair<fault, std::uint32_t>> rates) {
  weft::sim::options o;
  for (const auto& [f, ppm] : rates) o.faults.rate_ppm[static_cast<std::size_t>(f)] = ppm;
  return o;
}

// Checks inside a run: a failed check fails the run with the line.
#define IO_CHECK_EQ(sim, a, b)                                                                          \
  do {                                                                                                  \
    const auto io_check_a = (a);                                                                        \
    const auto io_check_b = (b);                                                                        \
    if (!(io_check_a == io_check_b)) {                                                                  \
      (sim).fail(std::string(#a " == " #b " failed: ") + std::to_string(io_check_a) + " vs " +          \
                 std::to_string(io_check_b) + " at line " + std::to_string(__LINE__));                  \
    }                                                                                                   \
  } while (false)

io_request file_request(io_opcode code, int fd, void* data, std::size_t size, std::uint64_t offset) {
  io_request r = request(code, fd);
  r.data = data;
  r.size = size;
  r.offset = offset;
  return r;
}

int open_file(driver& d, const char* path, int flags) {
  io_request r = request(io_opcode::openat, -1);
  r.path = path;
  r.flags = flags;
  r.mode = 0644;
  return static_cast<int>(submit_and_finish(d, r));
}

std::int64_t stat_size(driver& d, const char* path, std::uint64_t& size, std::uint32_t& mask) {
  struct statx st {};
  io_request r = request(io_opcode::statx, -1);
  r.path = path;
  r.mode = STATX_SIZE;
  r.data = &st;
  const std::int64_t rc = submit_and_finish(d, r);
  size = st.stx_size;
  mask = st.stx_mask;
  return rc;
}

TEST(io_driver, tcp_connect_accept_and_send_both_ways_between_two_threads) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto r = run_body(&tcp_exchange, seed);
    EXPECT_TRUE(r.passed) << "seed " << seed << ": " << first_failure(r);
  }
}

TEST(io_driver, the_status_names_the_simulated_backend) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        if (d.status().backend != weft::io_backend::simulated) sim.fail("backend is not simulated");
        if (d.status().fallback_reason) sim.fail("a fallback reason is set");
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, connect_without_a_listener_is_refused) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const int fd = open_socket(d, AF_INET, SOCK_STREAM);
        IO_CHECK_EQ(sim, connect_to(d, fd, 4'000), -ECONNREFUSED);
        // A listener that closed refuses too.
        const int l = open_socket(d, AF_INET, SOCK_STREAM);
        sockaddr_in a = loopback(4'001);
        IO_CHECK_EQ(sim, bind_to(d, l, a), 0);
        IO_CHECK_EQ(sim, listen_on(d, l, 1), 0);
        IO_CHECK_EQ(sim, close_fd(d, l), 0);
        const int fd2 = open_socket(d, AF_INET, SOCK_STREAM);
        IO_CHECK_EQ(sim, connect_to(d, fd2, 4'001), -ECONNREFUSED);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, binding_a_bound_port_fails_eaddrinuse_and_port_zero_picks_a_free_one) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const int a = open_socket(d, AF_INET, SOCK_STREAM);
        const int b = open_socket(d, AF_INET, SOCK_STREAM);
        sockaddr_in addr = loopback(5'000);
        IO_CHECK_EQ(sim, bind_to(d, a, addr), 0);
        IO_CHECK_EQ(sim, bind_to(d, b, addr), -EADDRINUSE);
        sockaddr_in zero = loopback(0);
        IO_CHECK_EQ(sim, bind_to(d, b, zero), 0);
        const std::uint16_t picked = local_port(d, b);
        if (picked == 0 || picked == 5'000) sim.fail("port 0 picked " + std::to_string(picked));
        // Closing frees the port.
        IO_CHECK_EQ(sim, close_fd(d, a), 0);
        const int c = open_socket(d, AF_INET, SOCK_STREAM);
        IO_CHECK_EQ(sim, bind_to(d, c, addr), 0);
        // fds are the lowest free numbers: a's fd is reused by c.
        IO_CHECK_EQ(sim, c, a);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, a_read_after_the_peer_shuts_down_sees_the_end_and_a_send_after_its_close_epipe) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const connection conn = connect_pair(d, 4);
        const int c = conn.client;
        const int s = static_cast<int>(accept_on(d, conn.listener));
        IO_CHECK_EQ(sim, send_all(d, c, "abc"), 0);
        IO_CHECK_EQ(sim, d.execute(request(io_opcode::nop, -1)), 0);
        io_request shut = request(io_opcode::shutdown, c);
        shut.flags = SHUT_WR;
        IO_CHECK_EQ(sim, submit_and_finish(d, shut), 0);
        std::int64_t error = 1;
        const std::string got = receive(d, s, 10, &error);
        if (got != "abc") sim.fail("received '" + got + "'");
        IO_CHECK_EQ(sim, error, 0);  // the end of the stream after the bytes
        IO_CHECK_EQ(sim, send_all(d, c, "x"), -EPIPE);  // its own write side is shut
        IO_CHECK_EQ(sim, close_fd(d, c), 0);
        IO_CHECK_EQ(sim, send_all(d, s, "y"), -EPIPE);
        IO_CHECK_EQ(sim, send_all(d, 99, "y"), -EBADF);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

// io_short, io_latency and io_reorder on every operation they can touch: sends and receives move
// fewer bytes, completions come late and out of order, and still every byte arrives once, in order.
TEST(io_driver, short_transfers_latency_and_reordering_keep_a_stream_intact) {
  const auto o = with_faults({{fault::io_short, 500'000}, {fault::io_latency, 500'000}, {fault::io_reorder, 500'000}});
  std::uint64_t faults = 0;
  bool time_moved = false;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const auto r = run_body(&tcp_exchange, seed, o);
    EXPECT_TRUE(r.passed) << "seed " << seed << ": " << first_failure(r);
    faults += r.faults;
    time_moved |= r.virtual_elapsed.count() > 0;
  }
  EXPECT_GT(faults, 0u);
  EXPECT_TRUE(time_moved) << "simulated latency never advanced virtual time";
}

// Under io_latency a completion is due later in virtual time; wait() sleeps no further than that
// due time (or an earlier deadline), and the clock moves to it because every thread is blocked.
TEST(io_driver, wait_returns_when_a_simulated_completion_falls_due) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        op o(request(io_opcode::nop, -1));
        const weft::instant submitted = weft::platform::clock::now();
        d.submit(o);
        IO_CHECK_EQ(sim, d.has_completions(), false);
        d.wait(submitted + std::chrono::nanoseconds(1));  // a deadline before the due time
        IO_CHECK_EQ(sim, (weft::platform::clock::now() - submitted).count(), 1);
        IO_CHECK_EQ(sim, d.poll(), 0u);
        d.wait(std::nullopt);  // no deadline: the due time ends the wait
        const auto waited = weft::platform::clock::now() - submitted;
        if (waited <= std::chrono::nanoseconds(1) || waited > std::chrono::milliseconds(1)) {
          sim.fail("the wait ended " + std::to_string(waited.count()) + " ns after the submission");
        }
        IO_CHECK_EQ(sim, d.has_completions(), true);
        IO_CHECK_EQ(sim, d.poll(), 1u);
        IO_CHECK_EQ(sim, o.completions, 1);
      },
      1, with_faults({{fault::io_latency, 1'000'000}}));
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, files_write_read_fsync_statx_ftruncate_rename_and_unlink) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const int fd = open_file(d, "data.bin", O_CREAT | O_RDWR | O_EXCL);
        if (fd < 0) {
          sim.fail("openat answered " + std::to_string(fd));
          return;
        }
        char text[] = "hello world";
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, fd, text, 11, 0)), 11);
        char buf[16] = {};
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, fd, buf, 5, 6)), 5);
        if (std::string(buf, 5) != "world") sim.fail("read at offset 6: " + std::string(buf, 5));
        // The current position: a write at it starts at 0 (offset writes leave it alone).
        char head[] = "HE";
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, fd, head, 2, weft::platform::io_offset_current)), 2);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, fd, buf, 3, weft::platform::io_offset_current)), 3);
        if (std::string(buf, 3) != "llo") sim.fail("read at the position: " + std::string(buf, 3));
        IO_CHECK_EQ(sim, submit_and_finish(d, request(io_opcode::fsync, fd)), 0);
        std::uint64_t size = 0;
        std::uint32_t mask = 0;
        IO_CHECK_EQ(sim, stat_size(d, "/data.bin", size, mask), 0);  // relative names start at "/"
        IO_CHECK_EQ(sim, size, 11u);
        if ((mask & STATX_SIZE) == 0) sim.fail("statx left STATX_SIZE out of stx_mask");
        io_request trunc = request(io_opcode::ftruncate, fd);
        trunc.offset = 5;
        IO_CHECK_EQ(sim, submit_and_finish(d, trunc), 0);
        IO_CHECK_EQ(sim, stat_size(d, "data.bin", size, mask), 0);
        IO_CHECK_EQ(sim, size, 5u);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, fd, buf, 16, 0)), 5);
        IO_CHECK_EQ(sim, close_fd(d, fd), 0);
        IO_CHECK_EQ(sim, open_file(d, "data.bin", O_CREAT | O_EXCL | O_WRONLY), -EEXIST);

        io_request ren = request(io_opcode::renameat, -1);
        ren.path = "data.bin";
        ren.path2 = "moved.bin";
        IO_CHECK_EQ(sim, submit_and_finish(d, ren), 0);
        IO_CHECK_EQ(sim, open_file(d, "data.bin", O_RDONLY), -ENOENT);
        const int moved = open_file(d, "moved.bin", O_RDONLY | O_APPEND);
        if (moved < 0) sim.fail("the renamed file does not open");
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, moved, buf, 16, weft::platform::io_offset_current)), 5);
        if (std::string(buf, 5) != "HEllo") sim.fail("renamed file holds " + std::string(buf, 5));
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, moved, text, 1, 0)), -EBADF);  // read-only

        io_request unlink = request(io_opcode::unlinkat, -1);
        unlink.path = "moved.bin";
        IO_CHECK_EQ(sim, submit_and_finish(d, unlink), 0);
        IO_CHECK_EQ(sim, submit_and_finish(d, unlink), -ENOENT);
        IO_CHECK_EQ(sim, stat_size(d, "moved.bin", size, mask), -ENOENT);
        // The open description keeps the unlinked file's bytes.
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, moved, buf, 16, 1)), 4);
        IO_CHECK_EQ(sim, close_fd(d, moved), 0);
        IO_CHECK_EQ(sim, close_fd(d, moved), -EBADF);

        // O_APPEND writes at the end; O_TRUNC empties.
        const int log = open_file(d, "log", O_CREAT | O_WRONLY | O_APPEND);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, log, text, 5, 0)), 5);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, log, text, 5, 0)), 5);
        IO_CHECK_EQ(sim, stat_size(d, "log", size, mask), 0);
        IO_CHECK_EQ(sim, size, 10u);
        IO_CHECK_EQ(sim, close_fd(d, log), 0);
        const int again = open_file(d, "log", O_WRONLY | O_TRUNC);
        IO_CHECK_EQ(sim, stat_size(d, "log", size, mask), 0);
        IO_CHECK_EQ(sim, size, 0u);
        IO_CHECK_EQ(sim, close_fd(d, again), 0);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, missing_names_answer_enoent) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        IO_CHECK_EQ(sim, open_file(d, "/nowhere", O_RDONLY), -ENOENT);
        io_request unlink = request(io_opcode::unlinkat, -1);
        unlink.path = "/nowhere";
        IO_CHECK_EQ(sim, submit_and_finish(d, unlink), -ENOENT);
        io_request ren = request(io_opcode::renameat, -1);
        ren.path = "/nowhere";
        ren.path2 = "/elsewhere";
        IO_CHECK_EQ(sim, submit_and_finish(d, ren), -ENOENT);
        // An AF_UNIX name nobody bound.
        const int u = open_socket(d, AF_UNIX, SOCK_STREAM);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strcpy(a.sun_path, "/run/none.sock");
        io_request c = request(io_opcode::connect, u);
        c.addr = reinterpret_cast<sockaddr*>(&a);
        c.addr_size = sizeof a;
        IO_CHECK_EQ(sim, submit_and_finish(d, c), -ENOENT);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, the_io_error_fault_fails_file_operations_with_eio) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const int fd = open_file(d, "f", O_CREAT | O_RDWR);
        char b[4] = {};
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, fd, b, 4, 0)), -EIO);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, fd, b, 4, 0)), -EIO);
        IO_CHECK_EQ(sim, submit_and_finish(d, request(io_opcode::fsync, fd)), -EIO);
      },
      1, with_faults({{fault::io_error, 1'000'000}}));
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, the_io_reset_fault_resets_both_ends_of_a_connection) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const int l = open_socket(d, AF_INET6, SOCK_STREAM);
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_loopback;
        io_request b = request(io_opcode::bind, l);
        b.addr = reinterpret_cast<sockaddr*>(&a);
        b.addr_size = sizeof a;
        IO_CHECK_EQ(sim, d.execute(b), 0);
        IO_CHECK_EQ(sim, listen_on(d, l, 1), 0);
        sockaddr_in6 bound{};
        socklen_t len = sizeof bound;
        io_request name = request(io_opcode::getsockname, l);
        name.addr = reinterpret_cast<sockaddr*>(&bound);
        name.addr_len = &len;
        IO_CHECK_EQ(sim, d.execute(name), 0);
        const int c = open_socket(d, AF_INET6, SOCK_STREAM);
        io_request conn = request(io_opcode::connect, c);
        conn.addr = reinterpret_cast<sockaddr*>(&bound);
        conn.addr_size = len;
        IO_CHECK_EQ(sim, submit_and_finish(d, conn), 0);
        const int s = static_cast<int>(accept_on(d, l));
        IO_CHECK_EQ(sim, send_all(d, c, "data"), -ECONNRESET);
        std::int64_t error = 0;
        receive(d, s, 4, &error);
        IO_CHECK_EQ(sim, error, -ECONNRESET);
        // Reported once; then the stream is over.
        receive(d, s, 4, &error);
        IO_CHECK_EQ(sim, error, 0);
        IO_CHECK_EQ(sim, send_all(d, s, "more"), -EPIPE);
      },
      1, with_faults({{fault::io_reset, 1'000'000}}));
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, cancelling_a_pending_recv_completes_it_ecanceled_exactly_once) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const connection conn = connect_pair(d, 1);
        char buf[8];
        const io_request rr = receive_request(conn.client, buf, sizeof buf);
        op pending(rr);
        d.submit(pending);
        IO_CHECK_EQ(sim, d.in_flight(), 1u);
        IO_CHECK_EQ(sim, d.poll(), 0u);  // nothing sent: it waits
        IO_CHECK_EQ(sim, pending.completions, 0);
        d.cancel(pending);
        IO_CHECK_EQ(sim, finish(d, pending), -ECANCELED);
        d.cancel(pending);  // done already: nothing more
        d.poll();
        IO_CHECK_EQ(sim, pending.completions, 1);
        IO_CHECK_EQ(sim, d.in_flight(), 0u);
        // A cancel that comes after the result is known keeps the result.
        const int s = static_cast<int>(accept_on(d, conn.listener));
        op later(rr);
        d.submit(later);
        IO_CHECK_EQ(sim, send_all(d, s, "hi"), 0);
        d.cancel(later);
        IO_CHECK_EQ(sim, finish(d, later), 2);
        IO_CHECK_EQ(sim, later.completions, 1);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

// The buffer-lifetime oracle (platform::io_operation_freed): freeing an operation the kernel
// holds, waiting in it or with its result known but not delivered, fails the run and stops it at
// the free; freeing one never submitted, or after its completion, is fine.
bool went_on_after_the_free = false;

TEST(io_driver, freeing_an_operation_the_kernel_holds_stops_the_run_there) {
  went_on_after_the_free = false;
  const auto waiting = run_body(
      [](weft::sim::context&) {
        driver d;
        const connection conn = connect_pair(d, 1);
        char buf[8];
        op pending(receive_request(conn.client, buf, sizeof buf));
        d.submit(pending);
        weft::platform::io_operation_freed(pending);
        went_on_after_the_free = true;
      },
      1);
  ASSERT_FALSE(waiting.passed);
  EXPECT_NE(first_failure(waiting).find("buffer-lifetime oracle: an I/O operation (recv on fd"), std::string::npos)
      << first_failure(waiting);
  EXPECT_FALSE(went_on_after_the_free);

  const auto undelivered = run_body(
      [](weft::sim::context&) {
        driver d;
        op done(request(io_opcode::nop, -1));
        d.submit(done);  // finished at once: its completion waits for the next poll
        weft::platform::io_operation_freed(done);
        went_on_after_the_free = true;
      },
      1);
  ASSERT_FALSE(undelivered.passed);
  EXPECT_NE(first_failure(undelivered).find("buffer-lifetime oracle: an I/O operation (nop on fd -1)"),
            std::string::npos)
      << first_failure(undelivered);
  EXPECT_FALSE(went_on_after_the_free);
}

TEST(io_driver, freeing_an_operation_before_submission_or_after_its_completion_passes) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        op unsubmitted(request(io_opcode::nop, -1));
        weft::platform::io_operation_freed(unsubmitted);
        op done(request(io_opcode::nop, -1));
        d.submit(done);
        IO_CHECK_EQ(sim, finish(d, done), 0);
        weft::platform::io_operation_freed(done);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, reap_all_cancels_everything_pending_and_delivers_it) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const connection conn = connect_pair(d, 1);
        IO_CHECK_EQ(sim, accept_on(d, conn.listener) >= 0, true);  // the backlog is empty again
        op accepting(request(io_opcode::accept, conn.listener));
        char buf[8];
        op receiving(receive_request(conn.client, buf, sizeof buf));
        op finished(request(io_opcode::nop, -1));  // its result is known at once, due later
        d.submit(accepting);
        d.submit(receiving);
        d.submit(finished);
        IO_CHECK_EQ(sim, d.in_flight(), 3u);
        d.reap_all();
        IO_CHECK_EQ(sim, d.in_flight(), 0u);
        IO_CHECK_EQ(sim, accepting.completions, 1);
        IO_CHECK_EQ(sim, accepting.result, -ECANCELED);
        IO_CHECK_EQ(sim, receiving.completions, 1);
        IO_CHECK_EQ(sim, receiving.result, -ECANCELED);
        IO_CHECK_EQ(sim, finished.completions, 1);
        IO_CHECK_EQ(sim, finished.result, 0);
        d.reap_all();  // nothing left: nothing delivered twice
        IO_CHECK_EQ(sim, accepting.completions + receiving.completions + finished.completions, 3);
      },
      1, with_faults({{fault::io_latency, 1'000'000}}));
  EXPECT_TRUE(r.passed) << first_failure(r);
}

// An operation whose completion submits the next one (a read loop written as callbacks).
struct chained final : weft::platform::io_operation {
  chained(driver& d, int left) : d_(d), left_(left) { opcode = io_opcode::nop; }
  void complete(std::int64_t) noexcept override {
    ++completions;
    if (left_ > 0) {
      next_ = std::make_unique<chained>(d_, left_ - 1);
      d_.submit(*next_);
    }
  }
  int total() const { return completions + (next_ ? next_->total() : 0); }
  driver& d_;
  int left_;
  int completions = 0;
  std::unique_ptr<chained> next_;
};

TEST(io_driver, poll_counts_what_it_delivers_when_completions_submit_more) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        chained first(d, 2);
        d.submit(first);
        std::size_t delivered = 0;
        while (d.in_flight() > 0) {
          delivered += d.poll();
          if (d.in_flight() > 0 && !d.has_completions()) d.wait(std::nullopt);
        }
        IO_CHECK_EQ(sim, first.total(), 3);
        IO_CHECK_EQ(sim, delivered, 3u);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, udp_and_unix_datagrams_and_unix_streams) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        // UDP: sendmsg to an address, recvmsg names the sender.
        const int rx = open_socket(d, AF_INET, SOCK_DGRAM);
        sockaddr_in a = loopback(0);
        IO_CHECK_EQ(sim, bind_to(d, rx, a), 0);
        const std::uint16_t port = local_port(d, rx);
        const int tx = open_socket(d, AF_INET, SOCK_DGRAM);
        sockaddr_in to = loopback(port);
        char payload[] = "ping";
        iovec out_iov{payload, 4};
        msghdr out{};
        out.msg_name = &to;
        out.msg_namelen = sizeof to;
        out.msg_iov = &out_iov;
        out.msg_iovlen = 1;
        io_request send = request(io_opcode::sendmsg, tx);
        send.data = &out;
        IO_CHECK_EQ(sim, submit_and_finish(d, send), 4);
        char got[8] = {};
        sockaddr_in from{};
        iovec in_iov{got, sizeof got};
        msghdr in{};
        in.msg_name = &from;
        in.msg_namelen = sizeof from;
        in.msg_iov = &in_iov;
        in.msg_iovlen = 1;
        io_request recv = request(io_opcode::recvmsg, rx);
        recv.data = &in;
        IO_CHECK_EQ(sim, submit_and_finish(d, recv), 4);
        if (std::string(got, 4) != "ping") sim.fail("udp payload " + std::string(got, 4));
        IO_CHECK_EQ(sim, ntohs(from.sin_port), local_port(d, tx));

        // AF_UNIX stream: bind a path, connect, exchange; the name then exists in the file system.
        const int ul = open_socket(d, AF_UNIX, SOCK_STREAM);
        sockaddr_un un{};
        un.sun_family = AF_UNIX;
        std::strcpy(un.sun_path, "/run/app.sock");
        io_request bind = request(io_opcode::bind, ul);
        bind.addr = reinterpret_cast<sockaddr*>(&un);
        bind.addr_size = sizeof un;
        IO_CHECK_EQ(sim, d.execute(bind), 0);
        IO_CHECK_EQ(sim, listen_on(d, ul, 2), 0);
        const int uc = open_socket(d, AF_UNIX, SOCK_STREAM);
        io_request conn = request(io_opcode::connect, uc);
        conn.addr = reinterpret_cast<sockaddr*>(&un);
        conn.addr_size = sizeof un;
        IO_CHECK_EQ(sim, submit_and_finish(d, conn), 0);
        const int us = static_cast<int>(accept_on(d, ul));
        IO_CHECK_EQ(sim, send_all(d, uc, "over unix"), 0);
        if (receive(d, us, 9) != "over unix") sim.fail("unix stream bytes differ");
        const int other = open_socket(d, AF_UNIX, SOCK_STREAM);
        io_request again = request(io_opcode::bind, other);
        again.addr = reinterpret_cast<sockaddr*>(&un);
        again.addr_size = sizeof un;
        IO_CHECK_EQ(sim, d.execute(again), -EADDRINUSE);

        // AF_UNIX datagrams to a bound name.
        const int dr = open_socket(d, AF_UNIX, SOCK_DGRAM);
        sockaddr_un dn{};
        dn.sun_family = AF_UNIX;
        std::strcpy(dn.sun_path, "/run/dgram.sock");
        io_request dbind = request(io_opcode::bind, dr);
        dbind.addr = reinterpret_cast<sockaddr*>(&dn);
        dbind.addr_size = sizeof dn;
        IO_CHECK_EQ(sim, d.execute(dbind), 0);
        const int ds = open_socket(d, AF_UNIX, SOCK_DGRAM);
        io_request dconn = request(io_opcode::connect, ds);
        dconn.addr = reinterpret_cast<sockaddr*>(&dn);
        dconn.addr_size = sizeof dn;
        IO_CHECK_EQ(sim, submit_and_finish(d, dconn), 0);
        IO_CHECK_EQ(sim, send_all(d, ds, "gram"), 0);
        if (receive(d, dr, 4) != "gram") sim.fail("unix datagram differs");
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

// Accepts every connection queued on `listener` without waiting; returns how many.
int drain_accepts(driver& d, int listener) {
  for (int accepted = 0;; ++accepted) {
    op a(request(io_opcode::accept, listener));
    d.submit(a);
    d.poll();
    if (a.completions == 0) {
      d.cancel(a);
      finish(d, a);
      return accepted;
    }
  }
}

TEST(io_driver, listeners_that_all_set_so_reuseport_share_a_port) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        int on = 1;
        std::vector<int> listeners;
        for (int i = 0; i < 3; ++i) {
          const int l = open_socket(d, AF_INET, SOCK_STREAM);
          io_request opt = request(io_opcode::setsockopt, l);
          opt.flags = SOL_SOCKET;
          opt.mode = SO_REUSEPORT;
          opt.data = &on;
          opt.size = sizeof on;
          if (i < 2) IO_CHECK_EQ(sim, d.execute(opt), 0);
          listeners.push_back(l);
        }
        sockaddr_in a = loopback(6'000);
        IO_CHECK_EQ(sim, bind_to(d, listeners[0], a), 0);
        IO_CHECK_EQ(sim, bind_to(d, listeners[1], a), 0);
        IO_CHECK_EQ(sim, bind_to(d, listeners[2], a), -EADDRINUSE);  // it did not set SO_REUSEPORT
        IO_CHECK_EQ(sim, listen_on(d, listeners[0], 64), 0);
        IO_CHECK_EQ(sim, listen_on(d, listeners[1], 64), 0);
        constexpr int connections = 16;
        for (int i = 0; i < connections; ++i) {
          IO_CHECK_EQ(sim, connect_to(d, open_socket(d, AF_INET, SOCK_STREAM), 6'000), 0);
        }
        IO_CHECK_EQ(sim, drain_accepts(d, listeners[0]) + drain_accepts(d, listeners[1]), connections);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, socketpairs_and_pipes_carry_bytes) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        int pair[2] = {-1, -1};
        io_request sp = request(io_opcode::socketpair, AF_UNIX);
        sp.flags = SOCK_STREAM | SOCK_CLOEXEC;
        sp.data = pair;
        IO_CHECK_EQ(sim, d.execute(sp), 0);
        IO_CHECK_EQ(sim, send_all(d, pair[0], "there"), 0);
        IO_CHECK_EQ(sim, send_all(d, pair[1], "back"), 0);
        if (receive(d, pair[1], 5) != "there" || receive(d, pair[0], 4) != "back") sim.fail("socketpair bytes differ");
        int p[2] = {-1, -1};
        io_request pipe = request(io_opcode::pipe, -1);
        pipe.data = p;
        IO_CHECK_EQ(sim, d.execute(pipe), 0);
        char text[] = "piped";
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::write, p[1], text, 5, weft::platform::io_offset_current)), 5);
        IO_CHECK_EQ(sim, close_fd(d, p[1]), 0);
        char buf[8] = {};
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, p[0], buf, 8, weft::platform::io_offset_current)), 5);
        IO_CHECK_EQ(sim, submit_and_finish(d, file_request(io_opcode::read, p[0], buf, 8, weft::platform::io_offset_current)), 0);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, poll_waits_for_readiness_and_getpeername_names_the_peer) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        const connection conn = connect_pair(d, 1);
        const int s = static_cast<int>(accept_on(d, conn.listener));
        io_request readable = request(io_opcode::poll, conn.client);
        readable.flags = POLLIN;
        op waiting(readable);
        d.submit(waiting);
        d.poll();
        IO_CHECK_EQ(sim, waiting.completions, 0);  // nothing to read yet
        io_request writable = request(io_opcode::poll, conn.client);
        writable.flags = POLLOUT;
        IO_CHECK_EQ(sim, submit_and_finish(d, writable), POLLOUT);
        IO_CHECK_EQ(sim, send_all(d, s, "x"), 0);
        IO_CHECK_EQ(sim, finish(d, waiting), POLLIN);
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        io_request name = request(io_opcode::getpeername, conn.client);
        name.addr = reinterpret_cast<sockaddr*>(&peer);
        name.addr_len = &len;
        IO_CHECK_EQ(sim, d.execute(name), 0);
        IO_CHECK_EQ(sim, ntohs(peer.sin_port), conn.port);
        IO_CHECK_EQ(sim, len, static_cast<socklen_t>(sizeof peer));
        io_request unconnected = request(io_opcode::getpeername, conn.listener);
        unconnected.addr = reinterpret_cast<sockaddr*>(&peer);
        unconnected.addr_len = &len;
        IO_CHECK_EQ(sim, d.execute(unconnected), -ENOTCONN);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, processes_are_not_simulated) {
  const auto r = run_body(
      [](weft::sim::context& sim) {
        driver d;
        IO_CHECK_EQ(sim, d.execute(request(io_opcode::spawn, -1)), -ENOSYS);
        IO_CHECK_EQ(sim, d.execute(request(io_opcode::waitid, 3)), -ENOSYS);
        IO_CHECK_EQ(sim, d.execute(request(io_opcode::kill, 3)), -ENOSYS);
      },
      1);
  EXPECT_TRUE(r.passed) << first_failure(r);
}

TEST(io_driver, the_same_seed_gives_the_same_trace_hash_with_io) {
  const auto o = with_faults({{fault::io_short, 300'000}, {fault::io_latency, 300'000}, {fault::io_reorder, 300'000}});
  for (std::uint64_t seed : {3u, 17u, 4242u}) {
    const auto a = run_body(&tcp_exchange, seed, o);
    const auto b = run_body(&tcp_exchange, seed, o);
    EXPECT_TRUE(a.passed) << first_failure(a);
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
    EXPECT_EQ(a.steps, b.steps) << "seed " << seed;
  }
  EXPECT_NE(run_body(&tcp_exchange, 3, o).trace_hash, run_body(&tcp_exchange, 4, o).trace_hash);
}

TEST(io_driver, nothing_of_a_run_reaches_the_next_seed) {
  // The first run binds a fixed port and leaves it open; the next run binds it again.
  const auto body = [](weft::sim::context& sim) {
    driver d;
    const int fd = open_socket(d, AF_INET, SOCK_STREAM);
    sockaddr_in a = loopback(7'000);
    IO_CHECK_EQ(sim, bind_to(d, fd, a), 0);
    IO_CHECK_EQ(sim, fd, 3);
    IO_CHECK_EQ(sim, open_file(d, "left-over", O_CREAT | O_EXCL | O_WRONLY), 4);
  };
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const auto r = run_body(body, seed);
    EXPECT_TRUE(r.passed) << "seed " << seed << ": " << first_failure(r);
  }
}

}  // namespace
