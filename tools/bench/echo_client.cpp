// weft-echo-client — the one load client of the tcp_echo scenario, the same binary for every
// echo server (weft and its peers), so the servers are the only thing that differs. It uses no
// runtime: one thread, non-blocking sockets and epoll.
//
//   weft-echo-client --port P --server-pid PID [--connections N] [--size BYTES] [--seconds S]
//                    [--runtime NAME] [--figure NAME]
//
// 1. opens N connections to 127.0.0.1:P (TCP_NODELAY) before any timing;
// 2. every connection loops: send `size` bytes, read exactly `size` bytes back, compare them with
//    what was sent (a mismatch, an early end of stream or a socket error ends the client with
//    status 1), send the next message; each message is a different slice of a fixed pattern, so
//    a stale or misordered echo is caught;
// 3. a warm-up of a tenth of --seconds, then the timed window of --seconds: round trips that
//    complete inside it are counted and their latency (steady clock, from the send to the last
//    byte of the echo) goes into a histogram; the server's CPU time (utime + stime of
//    /proc/PID/stat, all of its threads) is read at both ends of the window;
// 4. prints, in the line format of the other bench programs (README.md):
//      scenario=<figure>     runtime=<NAME> value=<round trips/s> unit=rt/s
//      scenario=<figure>_p50 runtime=<NAME> value=<µs> unit=us
//      scenario=<figure>_p99 runtime=<NAME> value=<µs> unit=us
//      scenario=<figure>_cpu runtime=<NAME> value=<server CPU ms per 100,000 round trips> unit=ms/100k
// A bad flag ends it before any connection with one line naming the flag and exit status 2.
#include "../tool_flags.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using clock_type = std::chrono::steady_clock;

// ---- limits ------------------------------------------------------------------------------------
constexpr std::uint32_t max_connections = 4096;         // each is an fd and a message buffer
constexpr std::uint32_t max_size = 1u << 20;            // bytes per message
constexpr double min_seconds = 0.001;
constexpr double max_seconds = 3600.0;
constexpr std::int64_t max_pid = 4'194'304;             // the kernel's PID_MAX_LIMIT on 64-bit
constexpr double warmup_fraction = 0.1;                 // of --seconds, before the window
constexpr std::size_t fds_spare = 16;                   // the epoll fd, stdio, /proc reads
constexpr int epoll_batch = 256;                        // events taken per epoll_wait
// Messages are slices of one pattern starting at different offsets; a prime period keeps the
// offsets of neighbouring connections and rounds from lining up.
constexpr std::uint32_t pattern_period = 251;
constexpr double round_trips_per_cpu_figure = 100'000;  // _cpu is CPU per this many round trips

struct options {
  std::uint16_t port = 0;
  std::int64_t server_pid = 0;
  std::uint32_t connections = 32;
  std::uint32_t size = 64;
  double seconds = 3.0;
  std::string runtime = "unknown";
  std::string figure = "tcp_echo";
};

// A name that fits the result line's `scenario=` / `runtime=` fields.
std::string parse_name(std::string_view flag, std::string_view text, std::string_view allowed) {
  if (text.empty() || text.find_first_not_of(allowed) != std::string_view::npos) {
    throw tool_flags::usage_error(flag, "'" + std::string(text) + "' may hold only [" + std::string(allowed) + "]");
  }
  return std::string(text);
}

constexpr std::string_view lower_digits = "abcdefghijklmnopqrstuvwxyz0123456789_";
constexpr std::string_view runtime_chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";

// utime + stime of process `pid` in clock ticks, or nothing when it cannot be read (the process
// is gone). Fields 14 and 15 of /proc/PID/stat, counted after the command name's closing ')'
// (the name itself may hold spaces and parentheses).
std::optional<std::uint64_t> process_cpu_ticks(std::int64_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!f || !std::getline(f, text)) return std::nullopt;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  constexpr int utime_index = 11;  // field 14; the first field after ')' is field 3 (state)
  for (int i = 0; i <= utime_index + 1; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == utime_index) utime = std::stoull(field);
    if (i == utime_index + 1) stime = std::stoull(field);
  }
  return utime + stime;
}

options parse_options(int argc, char** argv) {
  options o;
  bool port_given = false, pid_given = false;
  tool_flags::reader r(argc, argv,
                       "--port P, --server-pid PID, --connections N, --size BYTES, --seconds S, --runtime NAME, "
                       "--figure NAME");
  while (r.next()) {
    if (r.is("--port")) {
      o.port = tool_flags::parse_integer<std::uint16_t>(r.flag(), r.value(), 1, 65535);
      port_given = true;
    } else if (r.is("--server-pid")) {
      const std::string_view flag = r.flag(), text = r.value();
      o.server_pid = tool_flags::parse_integer<std::int64_t>(flag, text, 1, max_pid);
      if (!process_cpu_ticks(o.server_pid)) {
        throw tool_flags::usage_error(flag, "no process " + std::string(text) + " (/proc/" + std::string(text) +
                                                "/stat cannot be read)");
      }
      pid_given = true;
    } else if (r.is("--connections")) {
      o.connections = tool_flags::parse_integer<std::uint32_t>(r.flag(), r.value(), 1, max_connections);
    } else if (r.is("--size")) {
      o.size = tool_flags::parse_integer<std::uint32_t>(r.flag(), r.value(), 1, max_size);
    } else if (r.is("--seconds")) {
      o.seconds = tool_flags::parse_decimal(r.flag(), r.value(), min_seconds, max_seconds);
    } else if (r.is("--runtime")) {
      o.runtime = parse_name(r.flag(), r.value(), runtime_chars);
    } else if (r.is("--figure")) {
      o.figure = parse_name(r.flag(), r.value(), lower_digits);
    } else {
      r.unknown();
    }
  }
  if (!port_given) throw tool_flags::usage_error("--port", "required flag missing");
  if (!pid_given) throw tool_flags::usage_error("--server-pid", "required flag missing");
  return o;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "weft-echo-client: %s\n", what.c_str());
  std::exit(1);
}
[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

// Round-trip latencies in a log-linear histogram: 64 linear steps per power of two, so a
// reported percentile is within 1/64 (1.6 %) of the true sample, in fixed memory.
class latency_histogram {
 public:
  void record(std::uint64_t ns) {
    ++buckets_[index(ns)];
    ++count_;
  }
  std::uint64_t count() const { return count_; }
  // The smallest recorded value v (to the histogram's precision) with at least q of the
  // samples <= v; needs count() > 0.
  double quantile_ns(double q) const {
    const auto rank = static_cast<std::uint64_t>(std::max(1.0, std::ceil(q * static_cast<double>(count_))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i];
      if (seen >= rank) return midpoint(i);
    }
    return midpoint(buckets_.size() - 1);
  }

 private:
  static constexpr unsigned sub_bits = 6;
  static constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;
  static constexpr std::size_t bucket_count = (64 - sub_bits + 1) * sub_count;

  // Values below sub_count have a bucket each; above, the bucket is the octave (msb) and the
  // next sub_bits bits.
  static std::size_t index(std::uint64_t v) {
    if (v < sub_count) return static_cast<std::size_t>(v);
    const unsigned msb = 63 - static_cast<unsigned>(std::countl_zero(v));
    const std::uint64_t top = v >> (msb - sub_bits);  // in [sub_count, 2 * sub_count)
    return static_cast<std::size_t>((msb - sub_bits + 1) * sub_count + (top - sub_count));
  }
  static double midpoint(std::size_t i) {
    if (i < sub_count) return static_cast<double>(i);
    const unsigned msb = static_cast<unsigned>(i / sub_count) + sub_bits - 1;
    const std::uint64_t top = i % sub_count + sub_count;
    const double low = std::ldexp(static_cast<double>(top), static_cast<int>(msb - sub_bits));
    const double width = std::ldexp(1.0, static_cast<int>(msb - sub_bits));
    return low + width / 2;
  }

  std::array<std::uint64_t, bucket_count> buckets_{};
  std::uint64_t count_ = 0;
};

struct connection {
  int fd = -1;
  std::uint32_t offset = 0;  // where this round's message starts in the pattern
  std::uint32_t sent = 0;
  std::uint32_t received = 0;
  bool want_write = false;  // EPOLLOUT armed: the last send was partial
  clock_type::time_point sent_at;
  std::vector<std::byte> inbox;
};

class client {
 public:
  explicit client(const options& o) : o_(o), conns_(o.connections) {
    pattern_.resize(o.size + pattern_period);
    for (std::size_t i = 0; i < pattern_.size(); ++i) {
      pattern_[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);
    }
  }
  ~client() {
    for (auto& c : conns_) {
      if (c.fd >= 0) ::close(c.fd);
    }
    if (epoll_ >= 0) ::close(epoll_);
  }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  void connect_all() {
    raise_fd_limit();
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) die_errno("epoll_create1");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(o_.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (std::uint32_t i = 0; i < o_.connections; ++i) {
      connection& c = conns_[i];
      c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c.fd < 0) die_errno("socket");
      if (::connect(c.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        die_errno("connect to 127.0.0.1:" + std::to_string(o_.port) + " (connection " + std::to_string(i) + ")");
      }
      const int one = 1;
      if (::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die_errno("TCP_NODELAY");
      if (::fcntl(c.fd, F_SETFL, O_NONBLOCK) != 0) die_errno("O_NONBLOCK");
      c.inbox.resize(o_.size);
      c.offset = (i * 17) % pattern_period;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = i;
      if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev) != 0) die_errno("epoll_ctl");
    }
  }

  // Warm-up, then the timed window; returns the server's CPU ticks spent in the window.
  std::uint64_t run() {
    const auto warmup = std::chrono::duration_cast<clock_type::duration>(
        std::chrono::duration<double>(o_.seconds * warmup_fraction));
    const auto window = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o_.seconds));
    const auto start = clock_type::now();
    for (std::uint32_t i = 0; i < o_.connections; ++i) send_message(i, start);
    window_start_ = start + warmup;
    window_end_ = window_start_ + window;
    std::uint64_t cpu_start = 0;
    bool in_window = false;
    std::array<epoll_event, epoll_batch> events;
    for (;;) {
      const auto now = clock_type::now();
      if (!in_window && now >= window_start_) {
        cpu_start = server_cpu();
        in_window = true;
      }
      if (now >= window_end_) break;
      const auto next = in_window ? window_end_ : window_start_;
      const int timeout_ms =
          static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
      const int n = ::epoll_wait(epoll_, events.data(), epoll_batch, timeout_ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        die_errno("epoll_wait");
      }
      for (int k = 0; k < n; ++k) {
        const std::uint32_t i = events[k].data.u32;
        if (events[k].events & EPOLLOUT) continue_send(i);
        if (events[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) receive(i);
      }
    }
    const std::uint64_t cpu_end = server_cpu();
    return cpu_end - cpu_start;
  }

  const latency_histogram& latencies() const { return latencies_; }

 private:
  // The soft limit up to the hard one (check_fd_budget made sure the hard one suffices).
  static void raise_fd_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) die_errno("getrlimit");
    lim.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) die_errno("setrlimit");
  }

  std::uint64_t server_cpu() const {
    const auto ticks = process_cpu_ticks(o_.server_pid);
    if (!ticks) die("server process " + std::to_string(o_.server_pid) + " is gone");
    return *ticks;
  }

  void send_message(std::uint32_t i, clock_type::time_point now) {
    connection& c = conns_[i];
    c.sent = 0;
    c.received = 0;
    c.sent_at = now;
    continue_send(i);
  }

  void continue_send(std::uint32_t i) {
    connection& c = conns_[i];
    while (c.sent < o_.size) {
      const ssize_t n = ::send(c.fd, pattern_.data() + c.offset + c.sent, o_.size - c.sent, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) break;
        die_errno("send on connection " + std::to_string(i));
      }
      c.sent += static_cast<std::uint32_t>(n);
    }
    const bool want_write = c.sent < o_.size;
    if (want_write != c.want_write) {
      epoll_event ev{};
      ev.events = EPOLLIN | (want_write ? EPOLLOUT : 0u);
      ev.data.u32 = i;
      if (::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev) != 0) die_errno("epoll_ctl");
      c.want_write = want_write;
    }
  }

  void receive(std::uint32_t i) {
    connection& c = conns_[i];
    while (c.received < o_.size) {
      const ssize_t n = ::recv(c.fd, c.inbox.data() + c.received, o_.size - c.received, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return;
        die_errno("recv on connection " + std::to_string(i));
      }
      if (n == 0) die("the server closed connection " + std::to_string(i) + " mid-exchange");
      c.received += static_cast<std::uint32_t>(n);
      if (c.received > c.sent) die("connection " + std::to_string(i) + ": more bytes echoed than sent");
    }
    if (std::memcmp(c.inbox.data(), pattern_.data() + c.offset, o_.size) != 0) {
      die("connection " + std::to_string(i) + ": the echo differs from the message sent");
    }
    const auto now = clock_type::now();
    if (now >= window_start_ && now < window_end_) {
      latencies_.record(static_cast<std::uint64_t>(std::chrono::nanoseconds(now - c.sent_at).count()));
    }
    c.offset = (c.offset + 1) % pattern_period;
    send_message(i, now);
  }

  const options& o_;
  std::vector<connection> conns_;
  std::vector<std::byte> pattern_;
  int epoll_ = -1;
  clock_type::time_point window_start_, window_end_;
  latency_histogram latencies_;
};

void check_fd_budget(const options& o) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) die_errno("getrlimit");
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < o.connections + fds_spare) {
    die("--connections " + std::to_string(o.connections) + " needs " + std::to_string(o.connections + fds_spare) +
        " file descriptors; the hard limit (ulimit -Hn) is " + std::to_string(lim.rlim_max));
  }
}

void report(const options& o, std::string_view suffix, double value, const char* unit) {
  std::printf("scenario=%s%.*s runtime=%s value=%.3f unit=%s\n", o.figure.c_str(), static_cast<int>(suffix.size()),
              suffix.data(), o.runtime.c_str(), value, unit);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse_options(argc, argv);
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error("weft-echo-client", e);
  }
  check_fd_budget(o);
  client c(o);
  c.connect_all();
  const std::uint64_t cpu_ticks = c.run();
  const latency_histogram& h = c.latencies();
  if (h.count() == 0) die("no round trip completed inside the " + std::to_string(o.seconds) + " s window");
  const double n = static_cast<double>(h.count());
  const double cpu_ms = static_cast<double>(cpu_ticks) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  report(o, "", n / o.seconds, "rt/s");
  report(o, "_p50", h.quantile_ns(0.50) / 1000.0, "us");
  report(o, "_p99", h.quantile_ns(0.99) / 1000.0, "us");
  report(o, "_cpu", cpu_ms * round_trips_per_cpu_figure / n, "ms/100k");
  std::fflush(stdout);
  return 0;
}
