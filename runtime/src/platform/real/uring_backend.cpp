// uring_backend.cpp — placeholder until the io_uring backend lands.
#include "backends.hpp"

namespace weft::platform {
std::unique_ptr<driver_backend> make_uring_backend(io_unavailable* why) {
  *why = io_unavailable::kernel_lacks_io_uring;
  return nullptr;
}
}  // namespace weft::platform
