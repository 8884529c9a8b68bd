// address.cpp — parsing and writing socket addresses of the simulated network.
#include "address.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

namespace weft::sim::io {

namespace {

int not_here(address_use use) { return use == address_use::bind ? -EADDRNOTAVAIL : -ENETUNREACH; }

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
      if (host != INADDR_LOOPBACK && !out.wildcard) return not_here(use);
      out.port = ntohs(in.sin_port);
      return 0;
    }
    case AF_INET6: {
      if (len < static_cast<socklen_t>(sizeof(sockaddr_in6))) return -EINVAL;
      sockaddr_in6 in6{};
      std::memcpy(&in6, sa, sizeof in6);
      out.wildcard = IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr);
      if (!IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) && !out.wildcard) return not_here(use);
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
      in->sin_addr.s_addr = htonl(a.wildcard ? INADDR_ANY : INADDR_LOOPBACK);
      size = sizeof(sockaddr_in);
      break;
    }
    case AF_INET6: {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&full);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(a.port);
      in6->sin6_addr = a.wildcard ? in6addr_any : in6addr_loopback;
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
    case AF_INET: return std::string(a.wildcard ? "0.0.0.0:" : "127.0.0.1:") + std::to_string(a.port);
    case AF_INET6: return std::string(a.wildcard ? "[::]:" : "[::1]:") + std::to_string(a.port);
    case AF_UNIX: return a.path.empty() ? "unix:(unnamed)" : a.path[0] == '\0' ? "unix:@" + a.path.substr(1) : "unix:" + a.path;
    default: return "unspec";
  }
}

}  // namespace weft::sim::io
