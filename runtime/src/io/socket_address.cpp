// socket_address.cpp — parsing and printing socket addresses (no system calls, no resolution).
#include <arpa/inet.h>
#include <charconv>
#include <cstring>
#include <netinet/in.h>
#include <sys/un.h>

#include <weft/io/socket_address.hpp>

namespace weft {

namespace {
std::error_code invalid() { return std::make_error_code(std::errc::invalid_argument); }

bool parse_port(std::string_view text, std::uint16_t* port) {
  if (text.empty() || text.size() > 5) return false;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > 65535) return false;
  *port = static_cast<std::uint16_t>(value);
  return true;
}
}  // namespace

socket_address::socket_address() noexcept : storage_{}, size_(0) { storage_.ss_family = AF_UNSPEC; }

expected<socket_address, std::error_code> socket_address::parse(std::string_view text) {
  socket_address a;
  std::uint16_t port = 0;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return unexpected(invalid());
    const std::string host(text.substr(1, close - 1));
    if (!parse_port(text.substr(close + 2), &port)) return unexpected(invalid());
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
    if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) != 1) return unexpected(invalid());
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    a.size_ = sizeof(sockaddr_in6);
    return a;
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return unexpected(invalid());
  const std::string host(text.substr(0, colon));
  if (!parse_port(text.substr(colon + 1), &port)) return unexpected(invalid());
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage_);
  if (inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1) return unexpected(invalid());
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  a.size_ = sizeof(sockaddr_in);
  return a;
}

socket_address socket_address::ipv4_loopback(std::uint16_t port) noexcept {
  socket_address a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage_);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.size_ = sizeof(sockaddr_in);
  return a;
}

socket_address socket_address::ipv4_any(std::uint16_t port) noexcept {
  socket_address a = ipv4_loopback(port);
  reinterpret_cast<sockaddr_in*>(&a.storage_)->sin_addr.s_addr = htonl(INADDR_ANY);
  return a;
}

socket_address socket_address::ipv6_loopback(std::uint16_t port) noexcept {
  socket_address a;
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  in6->sin6_addr = in6addr_loopback;
  a.size_ = sizeof(sockaddr_in6);
  return a;
}

expected<socket_address, std::error_code> socket_address::unix_path(std::string_view path) {
  socket_address a;
  auto* un = reinterpret_cast<sockaddr_un*>(&a.storage_);
  if (path.empty()) return unexpected(invalid());
  // An abstract name (a leading NUL) is its exact bytes, with no terminator: the kernel counts
  // every byte of its length, so a peer naming it the usual way must find the same name.
  const bool abstract = path.front() == '\0';
  if (!abstract && path.find('\0') != std::string_view::npos) return unexpected(invalid());
  if (path.size() + (abstract ? 0 : 1) > sizeof(un->sun_path)) {
    return unexpected(std::make_error_code(std::errc::filename_too_long));
  }
  un->sun_family = AF_UNIX;
  std::memcpy(un->sun_path, path.data(), path.size());
  if (!abstract) un->sun_path[path.size()] = '\0';
  a.size_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 0 : 1));
  return a;
}

socket_address socket_address::from_raw(const sockaddr* addr, socklen_t size) noexcept {
  socket_address a;
  if (addr == nullptr || size == 0) return a;
  if (size > sizeof(sockaddr_storage)) size = sizeof(sockaddr_storage);  // the kernel truncated it
  std::memcpy(&a.storage_, addr, size);
  a.size_ = size;
  return a;
}

int socket_address::family() const noexcept { return storage_.ss_family; }

std::uint16_t socket_address::port() const noexcept {
  switch (storage_.ss_family) {
    case AF_INET: return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
    case AF_INET6: return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
    default: return 0;
  }
}

std::string socket_address::to_string() const {
  char host[INET6_ADDRSTRLEN] = {};
  switch (storage_.ss_family) {
    case AF_INET:
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, host, sizeof host);
      return std::string(host) + ":" + std::to_string(port());
    case AF_INET6:
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, host, sizeof host);
      return "[" + std::string(host) + "]:" + std::to_string(port());
    case AF_UNIX: {
      const auto* un = reinterpret_cast<const sockaddr_un*>(&storage_);
      const std::size_t n = size_ > offsetof(sockaddr_un, sun_path) ? size_ - offsetof(sockaddr_un, sun_path) : 0;
      if (n > 0 && un->sun_path[0] == '\0') return "unix:@" + std::string(un->sun_path + 1, n - 1);  // abstract
      return "unix:" + std::string(un->sun_path, strnlen(un->sun_path, n));
    }
    default: return "unspecified";
  }
}

bool operator==(const socket_address& a, const socket_address& b) noexcept {
  return a.size_ == b.size_ && std::memcmp(&a.storage_, &b.storage_, a.size_) == 0;
}

}  // namespace weft
