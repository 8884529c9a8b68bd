// weft/platform/model/thread.hpp — threads under the model checker.
//
// Relacy runs a fixed set of threads, declared by each model (rl::test_suite<model, N>), and
// explores their interleavings; code under test cannot start more. So:
//   * platform::thread exists (types that hold one still compile) but *starting* one does not:
//     instantiating its starting constructor is a compile-time error in the model build;
//   * current_thread_id() is the Relacy thread index plus one (ids are non-zero everywhere);
//   * thread_slot<T, Tag> keeps one pointer per Relacy thread. The slots are process-wide, so a
//     model that sets one must reset it before its thread ends (Relacy re-runs iterations and
//     checks that a failing one fails again the same way).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <weft/platform/source_location.hpp>
#include <type_traits>
#include <vector>

#include <weft/platform/model/relacy.hpp>

namespace weft::platform {

inline std::uint64_t current_thread_id() noexcept { return std::uint64_t{rl::thread_index()} + 1; }

// One core per Relacy thread is what the schedules model; the runtime's default worker count
// is irrelevant under the checker.
inline unsigned hardware_concurrency() noexcept { return 1; }

// CPU placement is not modelled: one CPU, and pinning to it succeeds; which CPU a thread is on
// is unknown (-1).
inline int current_cpu() noexcept { return -1; }
inline std::vector<unsigned> allowed_cpus() { return {0}; }
inline int pin_current_thread(unsigned cpu) noexcept { return cpu == 0 ? 0 : EINVAL; }

namespace detail {
template <class>
inline constexpr bool model_cannot_start_threads = false;
}  // namespace detail

class thread {
 public:
  thread() noexcept = default;
  template <class F>
  explicit thread(F&&) {
    static_assert(detail::model_cannot_start_threads<F>,
                  "the model flavor cannot start threads: a Relacy model declares its threads");
  }
  thread(thread&&) noexcept = default;
  thread& operator=(thread&&) noexcept = default;

  bool joinable() const noexcept { return false; }
  void join() {}
};

// A scheduling point: lets the checker run another thread here.
inline void yield_thread(weft::platform::source_location loc = weft::platform::source_location::current()) {
  rl::yield(1, model::site(loc));
}

// One pointer per Relacy thread. Each Tag names one slot.
template <class T, class Tag>
struct thread_slot {
  static constexpr std::size_t threads_max = 16;  // more than any model declares
  static T* get() noexcept { return values_[index()]; }
  static void set(T* value) noexcept { values_[index()] = value; }

 private:
  static std::size_t index() noexcept {
    const std::size_t i = rl::thread_index();
    RL_ASSERT(i < threads_max);
    return i;
  }
  static inline T* values_[threads_max] = {};
};

}  // namespace weft::platform
