// weft/platform/sim/thread.hpp — simulated threads are fibers of the run.
//
// platform::thread starts a fiber that the seeded scheduler interleaves with the others at every
// seam operation; join() blocks the calling fiber (a scheduling point). Thread ids are sequential
// per run (the scenario's first fiber is 1), so they mean the same thing in every run of a seed.
// thread_slot is fiber-local: all fibers share one OS thread, so thread_local would be shared.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <weft/platform/source_location.hpp>
#include <system_error>
#include <utility>
#include <vector>

#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

namespace weft::platform {

inline std::uint64_t current_thread_id() noexcept { return sim::detail::current_fiber_id(); }

// Unknown (-1): the simulator models no CPU placement.
inline int current_cpu() noexcept { return -1; }

// The simulated machine's core count (a run option).
inline unsigned hardware_concurrency() noexcept { return sim::detail::cores(); }

// The simulated machine's CPUs, 0 .. cores-1: every simulated thread may run on any of them.
inline std::vector<unsigned> allowed_cpus() {
  std::vector<unsigned> cpus(hardware_concurrency());
  for (unsigned i = 0; i < cpus.size(); ++i) cpus[i] = i;
  return cpus;
}

// The simulator runs every fiber on one OS thread and models no CPU placement: pinning a
// simulated thread succeeds and changes nothing about the schedule.
inline int pin_current_thread(unsigned cpu) noexcept { return cpu < hardware_concurrency() ? 0 : EINVAL; }

class thread {
 public:
  thread() noexcept = default;
  // Starts fn on a new fiber. Throws std::system_error when the run's fault plan injects
  // `worker_start_failure` here (the sim's stand-in for the OS refusing a thread).
  template <class F>
  explicit thread(F&& fn, weft::platform::source_location loc = weft::platform::source_location::current()) {
    if (fault_point(fault::worker_start_failure, loc)) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "simulated thread start failure");
    }
    fiber_ = sim::detail::spawn(std::function<void()>(std::forward<F>(fn)), loc);
  }
  thread(thread&& other) noexcept : fiber_(std::exchange(other.fiber_, nullptr)) {}
  thread& operator=(thread&& other) noexcept {
    if (this != &other) {
      if (fiber_ != nullptr) sim::detail::drop_joinable(fiber_);  // std::thread would terminate
      fiber_ = std::exchange(other.fiber_, nullptr);
    }
    return *this;
  }
  thread(const thread&) = delete;
  thread& operator=(const thread&) = delete;
  ~thread() {
    if (fiber_ != nullptr) sim::detail::drop_joinable(fiber_);  // std::thread would terminate
  }

  bool joinable() const noexcept { return fiber_ != nullptr; }
  void join(weft::platform::source_location loc = weft::platform::source_location::current()) {
    sim::detail::join(std::exchange(fiber_, nullptr), loc);
  }
  // Lets the thread run on unowned: the run still waits for it to finish.
  void detach() noexcept { sim::detail::detach(std::exchange(fiber_, nullptr)); }

 private:
  sim::detail::fiber_record* fiber_ = nullptr;
};

inline void yield_thread(weft::platform::source_location loc = weft::platform::source_location::current()) noexcept {
  sim::detail::yield_point("yield_thread", loc, true);
}

// A per-fiber pointer. Each Tag names one slot.
template <class T, class Tag>
struct thread_slot {
  static T* get() noexcept { return static_cast<T*>(sim::detail::slot(index())); }
  static void set(T* value) noexcept { sim::detail::slot(index()) = value; }

 private:
  static std::size_t index() noexcept {
    static const std::size_t i = sim::detail::slot_allocate();
    return i;
  }
};

}  // namespace weft::platform
