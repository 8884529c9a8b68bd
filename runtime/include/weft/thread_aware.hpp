// weft/thread_aware.hpp — values that adapt their worker-bound state when moved between workers.
//
// spawn_anywhere(input, factory) and spawn_everywhere(input, factory) move `input` to the
// destination worker and, there, before the factory runs, call input.relocate(from, to) exactly
// once. `from` is the submitting worker (or external_worker when submitted from outside the
// runtime), `to` the destination. Relocation is a hook, not magic:
//   * it runs on the destination thread, so it may create thread-local or worker-local state;
//   * moving or copying a value by itself never relocates it, and neither do spawn, block_on or
//     joining (results are not relocated);
//   * it does not carry runtime handles (schedulers, join handles) to another runtime.
// Values without worker-bound state satisfy the concept by relocate() doing nothing; arithmetic
// types and weft::thread_agnostic<T> do so out of the box.
#pragma once

#include <weft/compiler_support.hpp>

#include <concepts>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

namespace weft {

// A worker of a runtime, by index; external_worker stands for any thread outside it.
struct worker_id {
  std::size_t index = std::numeric_limits<std::size_t>::max();
  bool is_external() const noexcept { return index == std::numeric_limits<std::size_t>::max(); }
  friend bool operator==(worker_id, worker_id) = default;
};
inline constexpr worker_id external_worker{};

// Customisation point: specialise for a type you cannot give a relocate() member.
template <class T>
struct thread_aware_traits {};
template <class T>
  requires requires(T& value, worker_id from, worker_id to) { value.relocate(from, to); }
struct thread_aware_traits<T> {
  static void relocate(T& value, worker_id from, worker_id to) { value.relocate(from, to); }
};
template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
struct thread_aware_traits<T> {
  static void relocate(T&, worker_id, worker_id) noexcept {}
};

template <class T>
concept thread_aware = std::move_constructible<T> && requires(T& value, worker_id from, worker_id to) {
  thread_aware_traits<T>::relocate(value, from, to);
};

// Wraps a value that has no worker-bound state: relocation does nothing.
template <class T>
class thread_agnostic {
 public:
  thread_agnostic() = default;
  explicit thread_agnostic(T value) : value_(std::move(value)) {}
  void relocate(worker_id, worker_id) noexcept {}
  T& get() noexcept { return value_; }
  const T& get() const noexcept { return value_; }
  T& operator*() noexcept { return value_; }
  T* operator->() noexcept { return &value_; }

 private:
  T value_;
};

}  // namespace weft
