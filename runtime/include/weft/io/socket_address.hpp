// weft/io/socket_address.hpp — an IPv4, IPv6 or Unix-domain socket address.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include <sys/socket.h>

#include <weft/expected.hpp>

namespace weft {

class socket_address {
 public:
  socket_address() noexcept;

  // "1.2.3.4:80", "[::1]:8080". A missing or out-of-range port, or text that is not a numeric
  // address, is std::errc::invalid_argument (no name resolution happens here).
  static expected<socket_address, std::error_code> parse(std::string_view text);
  static socket_address ipv4_loopback(std::uint16_t port) noexcept;
  static socket_address ipv6_loopback(std::uint16_t port) noexcept;
  static socket_address ipv4_any(std::uint16_t port) noexcept;
  // A Unix-domain path, or with a leading '\0' an abstract name (its exact bytes; to_string()
  // shows it as "unix:@name"). Longer than sun_path holds is std::errc::filename_too_long; a
  // path with a '\0' inside is std::errc::invalid_argument.
  static expected<socket_address, std::error_code> unix_path(std::string_view path);
  // From what the kernel wrote (accept, getsockname, recvfrom).
  static socket_address from_raw(const sockaddr* addr, socklen_t size) noexcept;

  int family() const noexcept;                 // AF_INET, AF_INET6, AF_UNIX, AF_UNSPEC
  std::uint16_t port() const noexcept;         // 0 for Unix addresses
  std::string to_string() const;               // "1.2.3.4:80", "[::1]:80", "unix:/path"
  const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  sockaddr* data() noexcept { return reinterpret_cast<sockaddr*>(&storage_); }
  socklen_t size() const noexcept { return size_; }
  socklen_t* size_ptr() noexcept { return &size_; }
  static constexpr socklen_t capacity() noexcept { return sizeof(sockaddr_storage); }

  friend bool operator==(const socket_address& a, const socket_address& b) noexcept;

 private:
  sockaddr_storage storage_;
  socklen_t size_;
};

}  // namespace weft
