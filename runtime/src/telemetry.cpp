// telemetry.cpp — the default sink, and the always-on assertion handler.
#include <cstdio>
#include <cstdlib>

#include <weft/platform/assert.hpp>
#include <weft/telemetry.hpp>

namespace weft {

namespace {
class noop_sink final : public telemetry_sink {
 public:
  void record(const telemetry_event&) noexcept override {}
};
}  // namespace

std::shared_ptr<telemetry_sink> noop_telemetry() {
  static const std::shared_ptr<telemetry_sink> sink = std::make_shared<noop_sink>();
  return sink;
}

}  // namespace weft

namespace weft::platform {
[[noreturn]] void assert_failed(const char* condition, const char* file, int line) noexcept {
  std::fprintf(stderr, "weft: assertion failed: %s at %s:%d\n", condition, file, line);
  std::fflush(stderr);
  std::abort();
}
}  // namespace weft::platform
