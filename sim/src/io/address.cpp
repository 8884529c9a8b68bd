// address.cpp — parsing and writing socket addresses of the simulated network.
#include "address.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

namespace weft::sim::io {

namespace {

int not_here(address_use use) { return use == address_use::bind ? -EADDRNOTAVAIL : -ENETUNREACH; }

constexpr std::uint32_t network_v4 = 0x0A000000;  // 10.0.0.0/24: host k is .k+1

// fd00::k+1 for host k: the IPv6 twin of network_v4.
bool network_v6(const in6_addr& a, std::uint32_t& last) {
  if (a.s6_addr[0] != 0xfd) return false;
  for (int i = 1; i < 15; ++i) {
    if (a.s6_addr[i] != 0) return false;
  }
  last = a.s6_addr[15];
  return true;
}

// The host whose network address ends in `last`, or own_node when none may.
std::int32_t node_of(std::uint32_t last) {
  return last >= 1 && last <= hosts_max ? static_cast<std::int32_t>(last - 1) : own_node;
}

}  // namespace

int parse_address(const sockaddr* sa, socklen_t len, int family, address_use use, address& out) {
  if (sa == nullptr || len < static_cast<socklen_t>(sizeof(sa_family_t))) return -EINVAL;
  if (sa->sa_family != family) return use == address_use::connect && sa->sa_family == AF_UNSPEC ? -EINVAL : -EAFNOSUPPORT;
  out = address{};
  out.family = family;
  switch (family) {
    case AF_INET: {
      if (len < static_cast<socklen_t>(sizeof(sockaddr_in))) return -EINVAL;
      sockaddr_in in{};
      std::memcpy(&in, sa, sizeof in);
      const std::uint32_t host = ntohl(in.sin_addr.s_addr);
      out.wildcard = host == INADDR_ANY;
      if (host != INADDR_LOOPBACK && !out.wildcard) {
        if ((host & 0xFFFFFF00u) != network_v4) return not_here(use);
        out.node = node_of(host & 0xFFu);
        if (out.node == own_node) return not_here(use);
        out.loopback = false;
      }
      out.port = ntohs(in.sin_port);
      return 0;
    }
    case AF_INET6: {
      if (len < static_cast<socklen_t>(sizeof(sockaddr_in6))) return -EINVAL;
      sockaddr_in6 in6{};
      std::memcpy(&in6, sa, sizeof in6);
      out.wildcard = IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr);
      if (!IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) && !out.wildcard) {
        std::uint32_t last = 0;
        if (!network_v6(in6.sin6_addr, last)) return not_here(use);
        out.node = node_of(last);
        if (out.node == own_node) return not_here(use);
        out.loopback = false;
      }
      out.port = ntohs(in6.sin6_port);
      return 0;
    }
    case AF_UNIX: {
      constexpr socklen_t path_at = offsetof(sockaddr_un, sun_path);
      if (len > static_cast<socklen_t>(sizeof(sockaddr_un))) return -EINVAL;
      if (len <= path_at) return use == address_use::bind ? 0 : -EINVAL;  // unnamed
      const char* p = reinterpret_cast<const char*>(sa) + path_at;
      const std::size_t n = static_cast<std::size_t>(len - path_at);
      if (p[0] == '\0') {
        out.path.assign(p, n);  // abstract: every byte counts
      } else {
        out.path.assign(p, strnlen(p, n));
      }
      return 0;
    }
    default:
      return -EAFNOSUPPORT;
  }
}

void write_address(const address& a, sockaddr* out, socklen_t* len) {
  if (len == nullptr) return;
  sockaddr_storage full{};
  socklen_t size = 0;
  switch (a.family) {
    case AF_INET: {
      auto* in = reinterpret_cast<sockaddr_in*>(&full);
      in->sin_family = AF_INET;
      in->sin_port = htons(a.port);
      const std::uint32_t ip = a.wildcard   ? INADDR_ANY
                               : a.loopback ? INADDR_LOOPBACK
                                            : network_v4 | static_cast<std::uint32_t>(a.node + 1);
      in->sin_addr.s_addr = htonl(ip);
      size = sizeof(sockaddr_in);
      break;
    }
    case AF_INET6: {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&full);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(a.port);
      in6->sin6_addr = a.wildcard ? in6addr_any : in6addr_loopback;
      if (!a.wildcard && !a.loopback) {
        in6->sin6_addr = in6_addr{};
        in6->sin6_addr.s6_addr[0] = 0xfd;
        in6->sin6_addr.s6_addr[15] = static_cast<std::uint8_t>(a.node + 1);
      }
      size = sizeof(sockaddr_in6);
      break;
    }
    case AF_UNIX: {
      auto* un = reinterpret_cast<sockaddr_un*>(&full);
      un->sun_family = AF_UNIX;
      const std::size_t n = std::min(a.path.size(), sizeof un->sun_path);
      std::memcpy(un->sun_path, a.path.data(), n);
      // A filesystem name is reported with its terminating NUL when it fits, as Linux does.
      const bool nul = !a.path.empty() && a.path[0] != '\0' && n < sizeof un->sun_path;
      size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (nul ? 1 : 0));
      break;
    }
    default:
      full.ss_family = AF_UNSPEC;
      size = sizeof(sa_family_t);
      break;
  }
  if (out != nullptr) std::memcpy(out, &full, std::min(*len, size));
  *len = size;
}

std::string describe(const address& a) {
  switch (a.family) {
    case AF_INET:
      if (!a.wildcard && !a.loopback) return "10.0.0." + std::to_string(a.node + 1) + ":" + std::to_string(a.port);
      return std::string(a.wildcard ? "0.0.0.0:" : "127.0.0.1:") + std::to_string(a.port);
    case AF_INET6:
      if (!a.wildcard && !a.loopback) {
        char last[8];
        std::snprintf(last, sizeof last, "%x", static_cast<unsigned>(a.node + 1));
        return "[fd00::" + std::string(last) + "]:" + std::to_string(a.port);
      }
      return std::string(a.wildcard ? "[::]:" : "[::1]:") + std::to_string(a.port);
    case AF_UNIX: return a.path.empty() ? "unix:(unnamed)" : a.path[0] == '\0' ? "unix:@" + a.path.substr(1) : "unix:" + a.path;
    default: return "unspec";
  }
}

}  // namespace weft::sim::io
