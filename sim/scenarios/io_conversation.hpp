// Helpers the I/O scenarios share: seeded payloads, and the oracle of a byte stream.
//
// stream_oracle: what a reader got back must be exactly what its writer sent, in order — or,
// when the run injects a fault that may end a conversation early (io_reset, or task_exception at
// any await), a prefix of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <optional>
#include <utility>

#include <weft/event_loop.hpp>
#include <weft/io/socket.hpp>
#include <weft/platform/fault.hpp>
#include <weft/sim/context.hpp>
#include <weft/task.hpp>

namespace weft::sim::scenarios {

// `n` bytes that tell positions and streams apart.
inline std::string io_payload(std::size_t n, std::uint64_t stream, std::uint64_t part) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + stream * 29 + part * 7 + i / 253) & 0xff);
  return s;
}

inline std::span<const std::byte> io_bytes(const std::string& s) { return std::as_bytes(std::span<const char>(s)); }

// A listener on 127.0.0.1 (port 0: the simulated kernel picks one) owned by `loop`, and its
// address; nothing, after failing the run, when either cannot be had.
inline std::optional<std::pair<tcp_listener, socket_address>> loopback_listener(context& sim, event_loop& loop) {
  auto listener = loop.block_on([]() -> task<expected<tcp_listener, std::error_code>> {
    co_return tcp_listener::bind(socket_address::ipv4_loopback(0));
  }());
  if (!listener) {
    sim.fail("the listener did not bind: " + listener.error().message());
    return std::nullopt;
  }
  auto at = listener->local_address();
  if (!at) {
    sim.fail("the listener has no address: " + at.error().message());
    return std::nullopt;
  }
  return std::pair<tcp_listener, socket_address>(std::move(*listener), at.value());
}

// Whether this run injects a fault that may cut a conversation short.
inline bool io_conversations_may_break(const context& sim) {
  return sim.fault_enabled(platform::fault::io_reset) || sim.fault_enabled(platform::fault::task_exception);
}

// Checks what `who` read back against what was sent.
inline void check_stream(context& sim, const std::string& who, const std::string& sent, const std::string& received,
                         bool complete) {
  if (complete && received == sent) return;
  const bool prefix = received.size() <= sent.size() && sent.compare(0, received.size(), received) == 0;
  if (prefix && io_conversations_may_break(sim)) return;
  sim.fail(who + ": read back " + std::to_string(received.size()) + " of " + std::to_string(sent.size()) +
           " bytes sent, " + (prefix ? "a prefix, and the conversation ended early" : "not the bytes sent, in order"));
}

}  // namespace weft::sim::scenarios
