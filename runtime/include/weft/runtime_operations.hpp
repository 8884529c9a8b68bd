// weft/runtime_operations.hpp — a copyable handle to ask a runtime to stop.
#pragma once

#include <weft/compiler_support.hpp>

#include <memory>

namespace weft {
namespace detail {
class runtime_core;
}

class runtime_operations {
 public:
  runtime_operations() noexcept = default;
  explicit runtime_operations(std::shared_ptr<detail::runtime_core> core) noexcept : core_(std::move(core)) {}

  // Requests shutdown; never waits; idempotent; safe from any thread, workers included.
  void request_stop() const noexcept;
  bool stop_requested() const noexcept;

 private:
  std::shared_ptr<detail::runtime_core> core_;
};

}  // namespace weft
