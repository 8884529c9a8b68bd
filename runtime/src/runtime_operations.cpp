// runtime_operations.cpp — the copyable stop controls of a runtime (runtime_operations.hpp): they
// share the runtime's core, so they keep working, as no-ops or answers, after the runtime is gone.
#include <weft/detail/runtime_core.hpp>
#include <weft/runtime_operations.hpp>

namespace weft {

void runtime_operations::request_stop() const noexcept {
  if (core_) core_->request_stop();
}

bool runtime_operations::stop_requested() const noexcept { return core_ && core_->stop_requested(); }

}  // namespace weft
