// weft/waker.hpp — the handle that asks for a task to be polled again.
//
// A waker is a (vtable, data) pair, so tasks, blocked threads and the simulator can all be woken
// through one type. Contract, for every kind of waker:
//   * wake() may be called from any thread, any number of times; duplicates coalesce;
//   * wake() never runs the woken party on the calling thread — for a task it schedules a poll
//     on the task's own loop;
//   * a waker may outlive what it wakes (task, loop, runtime); it then does nothing;
//   * copying a waker is cheap (a reference count); a waker never keeps a runtime running;
//   * a waker used once can be used up by the wake: `std::move(w).wake()` wakes and empties `w`,
//     as wake() then destruction would, in one step where the kind of waker allows (a task's
//     waker hands its reference to the poll it queues instead of adding one and dropping its own).
#pragma once

#include <weft/compiler_support.hpp>

#include <utility>

namespace weft {

struct raw_waker {
  const struct waker_vtable* vtable = nullptr;
  void* data = nullptr;
};

struct waker_vtable {
  raw_waker (*clone)(void* data) noexcept;
  void (*wake_by_ref)(void* data) noexcept;
  void (*drop)(void* data) noexcept;
  // Wake and give up the reference `data` stands for. Optional: null means wake_by_ref then drop.
  void (*wake_by_value)(void* data) noexcept = nullptr;
};

class waker {
 public:
  // A waker that wakes nothing.
  waker() noexcept = default;
  // Adopts a raw waker (its reference is transferred to this object).
  explicit waker(raw_waker raw) noexcept : raw_(raw) {}

  waker(const waker& other) noexcept : raw_(other.raw_.vtable ? other.raw_.vtable->clone(other.raw_.data) : raw_waker{}) {}
  waker(waker&& other) noexcept : raw_(std::exchange(other.raw_, raw_waker{})) {}
  waker& operator=(const waker& other) noexcept {
    if (this != &other) *this = waker(other);
    return *this;
  }
  waker& operator=(waker&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, raw_waker{});
    }
    return *this;
  }
  ~waker() { reset(); }

  // Asks for the woken party to make progress. Thread-safe; never blocks; never polls inline.
  void wake() const& noexcept {
    if (raw_.vtable) raw_.vtable->wake_by_ref(raw_.data);
  }
  // The same, using this waker up: afterwards it is empty (as if reset()).
  void wake() && noexcept {
    const raw_waker used = std::exchange(raw_, raw_waker{});
    if (!used.vtable) return;
    if (used.vtable->wake_by_value) {
      used.vtable->wake_by_value(used.data);
    } else {
      used.vtable->wake_by_ref(used.data);
      used.vtable->drop(used.data);
    }
  }
  void operator()() const noexcept { wake(); }

  // True when both wake the same party (so a stored waker need not be replaced).
  bool will_wake(const waker& other) const noexcept { return raw_.data == other.raw_.data && raw_.data != nullptr; }
  bool valid() const noexcept { return raw_.vtable != nullptr; }
  explicit operator bool() const noexcept { return valid(); }

  void reset() noexcept {
    if (raw_.vtable) raw_.vtable->drop(raw_.data);
    raw_ = raw_waker{};
  }

 private:
  raw_waker raw_{};
};

}  // namespace weft
