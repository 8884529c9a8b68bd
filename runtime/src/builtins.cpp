// builtins.cpp — where a runtime worker finds its builtins (builtins.hpp): one per worker thread,
// installed by the worker before it runs anything and removed when it exits.
#include <weft/builtins.hpp>
#include <weft/platform/thread.hpp>
#include <weft/join_error.hpp>

namespace weft {

namespace {
struct builtins_tag;
using builtins_slot = platform::thread_slot<builtins, builtins_tag>;
}  // namespace

builtins& builtins::current() {
  if (builtins* b = builtins_slot::get()) return *b;
  throw usage_error("weft::builtins::current() called off a runtime worker");
}

builtins* builtins::try_current() noexcept { return builtins_slot::get(); }

void builtins::install(builtins* b) noexcept { builtins_slot::set(b); }

}  // namespace weft
