// io_status.cpp — names of the I/O driver vocabulary, for messages and logs.
#include <weft/platform/io_request.hpp>

namespace weft {

const char* to_string(io_backend b) noexcept {
  switch (b) {
    case io_backend::io_uring: return "io_uring";
    case io_backend::epoll: return "epoll";
    case io_backend::simulated: return "simulated";
    case io_backend::none: return "none";
  }
  return "unknown";
}

const char* to_string(io_unavailable r) noexcept {
  switch (r) {
    case io_unavailable::kernel_lacks_io_uring: return "the kernel has no io_uring (ENOSYS)";
    case io_unavailable::not_permitted: return "io_uring is not permitted here (EPERM: seccomp or kernel.io_uring_disabled)";
    case io_unavailable::resource_limit: return "a resource limit stopped ring setup (ENOMEM, EMFILE or ENFILE)";
    case io_unavailable::missing_opcode: return "the kernel's io_uring lacks a feature or opcode the driver needs";
    case io_unavailable::forced_by_option: return "epoll was chosen by the loop's options";
    case io_unavailable::forced_by_environment: return "epoll was chosen by WEFT_DRIVER";
  }
  return "unknown";
}

const char* to_string(io_driver_choice c) noexcept {
  switch (c) {
    case io_driver_choice::automatic: return "automatic";
    case io_driver_choice::io_uring: return "io_uring";
    case io_driver_choice::epoll: return "epoll";
  }
  return "unknown";
}

}  // namespace weft
