// epoll_backend.cpp — placeholder until the epoll backend lands.
#include <stdexcept>

#include "backends.hpp"

namespace weft::platform {
std::unique_ptr<driver_backend> make_epoll_backend() { throw std::logic_error("epoll backend not built yet"); }
}  // namespace weft::platform
