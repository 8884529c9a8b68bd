// address.hpp — socket addresses of the simulated network: loopback IPv4/IPv6 ports and AF_UNIX
// names, read from and written to the caller's sockaddr as Linux does.
#pragma once

#include <cstdint>
#include <string>

#include <sys/socket.h>

namespace weft::sim::io {

struct address {
  int family = AF_UNSPEC;  // AF_INET, AF_INET6 or AF_UNIX
  std::uint16_t port = 0;  // AF_INET, AF_INET6 (host order)
  bool wildcard = false;   // AF_INET, AF_INET6: 0.0.0.0 / :: (bound), reported as such
  std::string path;        // AF_UNIX: the name; empty: unnamed; a leading '\0': abstract

  bool named() const noexcept { return family == AF_UNIX ? !path.empty() : port != 0; }
  // The loopback address this one answers on (the wildcard's is loopback too).
  bool same_endpoint(const address& other) const noexcept {
    return family == other.family && port == other.port && path == other.path;
  }
};

// Why an address is refused, as the calling system call would say it.
enum class address_use : std::uint8_t { bind, connect, send };

// Reads `len` bytes at `sa` as an address of `family`: 0, or -errno (EINVAL: too short or too
// long; EAFNOSUPPORT: another family; EADDRNOTAVAIL / ENETUNREACH: not loopback — the simulated
// network has no other host).
int parse_address(const sockaddr* sa, socklen_t len, int family, address_use use, address& out);

// Writes `a` into `out` as getsockname/accept do: at most *len bytes, *len set to the full size.
void write_address(const address& a, sockaddr* out, socklen_t* len);

// "127.0.0.1:5000", "[::1]:5000", "unix:/tmp/s" (traces).
std::string describe(const address& a);

}  // namespace weft::sim::io
