// tools/bench/echo_server_args.hpp — the flags every C++ echo server of the tcp_echo scenario
// takes (weft's, the Asio peer's, the raw liburing reference), mirrored in Rust by
// peers/common/echo_args.rs:
//
//   <server> --port P [--threads N]
//
// The server listens on 127.0.0.1:P with N threads (2 unless told) and echoes every byte it reads
// until the peer closes. A bad flag ends it with one line naming the flag and exit status 2
// (../tool_flags.hpp). Standalone: the standard library only.
#pragma once

#include "../tool_flags.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bench {

inline constexpr unsigned echo_threads_max = 64;
inline constexpr unsigned echo_threads_default = 2;
// Bytes a server reads at once: the largest message of the scenario (4 KiB) fits whole.
inline constexpr std::size_t echo_buffer_bytes = 16 * 1024;
// The listen backlog: the scenario's 256 connections arrive at once.
inline constexpr int echo_backlog = 1024;

struct echo_server_args {
  std::uint16_t port = 0;
  unsigned threads = echo_threads_default;
};

inline echo_server_args parse_echo_server_args(int argc, char** argv, std::string_view program) {
  echo_server_args a;
  bool port_given = false;
  try {
    tool_flags::reader r(argc, argv, "--port P, --threads N");
    while (r.next()) {
      if (r.is("--port")) {
        a.port = tool_flags::parse_integer<std::uint16_t>(r.flag(), r.value(), 1, 65535);
        port_given = true;
      } else if (r.is("--threads")) {
        a.threads = tool_flags::parse_integer<unsigned>(r.flag(), r.value(), 1, echo_threads_max);
      } else {
        r.unknown();
      }
    }
    if (!port_given) throw tool_flags::usage_error("--port", "required flag missing");
  } catch (const tool_flags::usage_error& e) {
    tool_flags::exit_with_usage_error(program, e);
  }
  return a;
}

}  // namespace bench
