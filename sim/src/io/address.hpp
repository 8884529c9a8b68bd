// address.hpp — socket addresses of the simulated network: each host's loopback and its own
// network address (host k is 10.0.0.(k+1) and fd00::(k+1)), ports, and AF_UNIX names, read from
// and written to the caller's sockaddr as Linux does.
#pragma once

#include <cstdint>
#include <string>

#include <sys/socket.h>

namespace weft::sim::io {

// Hosts a simulation may hold: one per last octet of 10.0.0.0/24 (10.0.0.255 is broadcast).
inline constexpr std::uint32_t hosts_max = 254;
// An address's `node` before the world knows which host's loopback or wildcard it is.
inline constexpr std::int32_t own_node = -1;

struct address {
  int family = AF_UNSPEC;  // AF_INET, AF_INET6 or AF_UNIX
  std::uint16_t port = 0;  // AF_INET, AF_INET6 (host order)
  bool wildcard = false;   // AF_INET, AF_INET6: 0.0.0.0 / :: (bound), reported as such
  bool loopback = true;    // AF_INET, AF_INET6: 127.0.0.1 / ::1, else the host's network address
  std::int32_t node = own_node;  // AF_INET, AF_INET6: the host it belongs to (own_node: the caller's)
  std::string path;        // AF_UNIX: the name; empty: unnamed; a leading '\0': abstract

  bool named() const noexcept { return family == AF_UNIX ? !path.empty() : port != 0; }
  // Whether both name the same socket endpoint (a wildcard compares as the address it answers on).
  bool same_endpoint(const address& other) const noexcept {
    return family == other.family && port == other.port && path == other.path && node == other.node &&
           (family == AF_UNIX || wildcard || other.wildcard || loopback == other.loopback);
  }
};

// Why an address is refused, as the calling system call would say it.
enum class address_use : std::uint8_t { bind, connect, send };

// Reads `len` bytes at `sa` as an address of `family`: 0, or -errno (EINVAL: too short or too
// long; EAFNOSUPPORT: another family; EADDRNOTAVAIL / ENETUNREACH: outside loopback and
// 10.0.0.1-254 / fd00::1-fe, where no simulated host can be). `node` is the host a network
// address names, own_node for loopback and the wildcard; the world checks that host exists.
int parse_address(const sockaddr* sa, socklen_t len, int family, address_use use, address& out);

// Writes `a` into `out` as getsockname/accept do: at most *len bytes, *len set to the full size.
void write_address(const address& a, sockaddr* out, socklen_t* len);

// "127.0.0.1:5000", "[::1]:5000", "unix:/tmp/s" (traces).
std::string describe(const address& a);

}  // namespace weft::sim::io
