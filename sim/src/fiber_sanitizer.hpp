// fiber_sanitizer.hpp — tells AddressSanitizer which stack the engine's fibers run on.
//
// ASan tracks one stack per OS thread. Boost.Fiber switches stacks without telling it, so after a
// switch ASan still believes the old stack is current: an exception thrown on a fiber (whose
// unwinding asks ASan to unpoison "the rest of the current stack") then unpoisons the wrong range
// or none, and the frames it skipped stay poisoned, to be reported later as stack overflows that
// never happened. The engine therefore announces every switch it makes: start_switch() in the
// outgoing context just before Boost.Fiber switches (pick_next(), which names the target), and
// finish_switch() in the incoming context as soon as it runs again (after its suspend or yield
// returns, or first thing in a new fiber).
//
// The announcements go through weak references to ASan's interface: they resolve when the program
// that links the simulator links ASan's runtime (the program, or the simulator, built with
// -fsanitize=address), and are null otherwise. So an installed simulator built without ASan still
// announces its switches inside a user's ASan build, and costs a null check per switch elsewhere.
//
// Invariants:
//   * Every start_switch() is followed by exactly one finish_switch(), on the target's stack,
//     before the next start_switch(): ASan stops the process on a start inside a switch.
//   * Boost.Fiber's dispatcher context runs library code only (it frees finished fibers and
//     calls the algorithm): switches to it are not announced and it announces no arrival, so
//     ASan keeps the previous stack as current while it runs; nothing is thrown there.
//   * A fiber that ends passes no save slot: ASan frees its fake stack.
#pragma once

#include <pthread.h>

#include <cstddef>

#include <boost/context/stack_context.hpp>
#include <boost/fiber/fixedsize_stack.hpp>

// ASan's fiber interface (sanitizer/common_interface_defs.h), declared weak: see above.
extern "C" {
__attribute__((weak)) void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom,
                                                          std::size_t size);
__attribute__((weak)) void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                                           std::size_t* size_old);
}

namespace weft::sim::detail {

// A stack's lowest address and size.
struct stack_span {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

// True when the program runs with ASan's runtime, which alone needs the announcements.
inline bool switches_announced() noexcept { return __sanitizer_start_switch_fiber != nullptr; }

// Outgoing context, just before the switch to a context running on `to`. `save`: where ASan keeps
// the outgoing context's fake stack until it runs again; null for a context that ends.
inline void start_switch(void** save, stack_span to) noexcept {
  if (__sanitizer_start_switch_fiber != nullptr) __sanitizer_start_switch_fiber(save, to.bottom, to.size);
}

// Incoming context, first thing after it runs again; `save` as stored by its last start_switch().
inline void finish_switch(void* save) noexcept {
  if (__sanitizer_finish_switch_fiber != nullptr) __sanitizer_finish_switch_fiber(save, nullptr, nullptr);
}

// The calling OS thread's own stack (the main context's). Asked once per thread: for the main
// thread, glibc answers by reading /proc/self/maps.
inline stack_span thread_stack() noexcept {
  static thread_local const stack_span span = [] {
    stack_span found;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* bottom = nullptr;
      std::size_t size = 0;
      if (pthread_attr_getstack(&attr, &bottom, &size) == 0) found = stack_span{bottom, size};
      pthread_attr_destroy(&attr);
    }
    return found;
  }();
  return span;
}

// Boost.Fiber's fixedsize_stack that also reports where each stack it allocates lies.
class recording_stack {
 public:
  recording_stack(std::size_t size, const void** bottom, std::size_t* bytes) noexcept
      : inner_(size), bottom_(bottom), bytes_(bytes) {}

  boost::context::stack_context allocate() {
    boost::context::stack_context sctx = inner_.allocate();
    // sp is the stack's top: stacks grow down from it.
    *bottom_ = static_cast<const char*>(sctx.sp) - sctx.size;
    *bytes_ = sctx.size;
    return sctx;
  }
  void deallocate(boost::context::stack_context& sctx) noexcept { inner_.deallocate(sctx); }

 private:
  boost::fibers::fixedsize_stack inner_;
  const void** bottom_;
  std::size_t* bytes_;
};

}  // namespace weft::sim::detail
