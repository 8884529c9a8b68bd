// weft/task.hpp — weft::task<T>, the lazy coroutine type, and the leaf-awaitable protocol.
//
// A task<T> does nothing until it is awaited or spawned. Awaiting one task from another uses
// symmetric transfer, so chains of co_await never grow the stack.
//
// Inside a task, co_await accepts exactly two kinds of operand:
//   * another task<U> (runs inline, as part of the same poll);
//   * a *leaf*: a type with `bool poll_ready(const weft::waker&)` and `await_resume()`.
// A leaf reports readiness; it never resumes the coroutine itself. When a leaf is not ready it
// keeps (a clone of) the waker and calls it later; the wake schedules a *poll* of the task on its
// own loop, and the poll resumes the coroutine only if the leaf now reports ready. Spurious,
// duplicate and late wakes therefore cost at most a poll and are harmless by construction.
// Foreign awaitables (which could resume the coroutine on any thread) are rejected at compile
// time: wrap them in a leaf.
#pragma once

#include <weft/compiler_support.hpp>

#include <concepts>
#include <cstddef>
#include <coroutine>
#include <exception>
#include <type_traits>
#include <utility>
#include <variant>

#include <weft/detail/block_recycler.hpp>
#include <weft/detail/coop_budget.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/fault.hpp>
#include <weft/waker.hpp>

namespace weft {

template <class T = void>
class task;

template <class L>
concept leaf_awaitable = requires(L& leaf, const waker& w) {
  { leaf.poll_ready(w) } -> std::convertible_to<bool>;
  leaf.await_resume();
};

namespace detail {

template <class T>
struct is_task : std::false_type {};
template <class T>
struct is_task<task<T>> : std::true_type {};

template <class>
inline constexpr bool always_false = false;

// Adapts a leaf to the coroutine protocol: registers it with the task being polled.
template <class L>
class leaf_awaiter {
 public:
  explicit leaf_awaiter(L& leaf) noexcept : leaf_(leaf) {}

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> awaiting) {
    task_header* task = current_task();
    WEFT_ASSERT(task != nullptr);  // leaves are awaited only from inside a polled weft task
    if (!coop_budget_take()) {
      // Budget spent (coop_budget.hpp): the leaf is polled at the task's next turn instead.
      task->borrowed_waker().wake();
    } else if (leaf_.poll_ready(task->borrowed_waker())) {
      return false;  // ready now: resume at once
    }
    task->suspend_on(leaf_poller{this, &poll_thunk}, awaiting);
    return true;
  }
  decltype(auto) await_resume() {
    if (WEFT_FAULT_POINT(task_exception)) throw injected_fault{};
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return leaf_.await_resume();
  }

 private:
  // A leaf whose poll throws becomes ready; the exception surfaces at its co_await.
  static bool poll_thunk(void* self, const waker& w) {
    auto* awaiter = static_cast<leaf_awaiter*>(self);
    try {
      return awaiter->leaf_.poll_ready(w);
    } catch (...) {
      awaiter->error_ = std::current_exception();
      return true;
    }
  }

  L& leaf_;
  std::exception_ptr error_;
};

// Destroys a task's frame out of line. clang 14's coroutine elision puts the frame of a coroutine
// called in a function on that function's stack when it sees the frame destroyed on every path
// that returns, ignoring paths that leave by an exception: a task made and kept (stored in a
// container, say) in a function that then throws would live in a dead stack frame. A destroy the
// optimiser cannot see is no such proof, so it never elides a weft task's frame
// (tests/runtime/coroutine_elision_test.cpp).
[[gnu::noinline]] inline void destroy_frame_opaquely(std::coroutine_handle<> frame) noexcept { frame.destroy(); }

class promise_base {
 public:
  // Coroutine frames come from the calling thread's block recycler (block_recycler.hpp); the
  // frame's size is passed back at destruction.
  static void* operator new(std::size_t size) { return block_recycler::allocate(size); }
  static void operator delete(void* frame, std::size_t size) noexcept { block_recycler::deallocate(frame, size); }

  std::suspend_always initial_suspend() const noexcept { return {}; }

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> finished) const noexcept {
      // Symmetric transfer back to whoever awaited this task; a root task returns to its poll.
      const std::coroutine_handle<> next = finished.promise().continuation_;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() const noexcept { return {}; }

  template <class A>
  decltype(auto) await_transform(A&& operand) {
    using plain = std::remove_cvref_t<A>;
    if constexpr (is_task<plain>::value) {
      return std::forward<A>(operand);
    } else if constexpr (leaf_awaitable<plain>) {
      return leaf_awaiter<plain>(operand);
    } else {
      static_assert(always_false<A>,
                    "weft tasks may co_await only weft::task<U> or a leaf awaitable "
                    "(poll_ready(const weft::waker&) + await_resume()); see weft/task.hpp");
    }
  }

  void set_continuation(std::coroutine_handle<> c) noexcept { continuation_ = c; }

 private:
  std::coroutine_handle<> continuation_{};
};

template <class T>
class task_promise final : public promise_base {
 public:
  task<T> get_return_object() noexcept;
  template <class U>
    requires std::is_convertible_v<U&&, T>
  void return_value(U&& value) {
    result_.template emplace<1>(std::forward<U>(value));
  }
  void unhandled_exception() noexcept { result_.template emplace<2>(std::current_exception()); }

  // The result: the value, or rethrows what the coroutine threw. Called once, after completion.
  T take() {
    if (result_.index() == 2) std::rethrow_exception(std::get<2>(result_));
    WEFT_ASSERT(result_.index() == 1);
    return std::move(std::get<1>(result_));
  }

 private:
  std::variant<std::monostate, T, std::exception_ptr> result_;
};

template <>
class task_promise<void> final : public promise_base {
 public:
  task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void unhandled_exception() noexcept { error_ = std::current_exception(); }
  void take() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

}  // namespace detail

template <class T>
class [[nodiscard]] task {
  static_assert(!std::is_reference_v<T>, "task<T&> is not supported; return a pointer or a value");

 public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;
  using handle_type = std::coroutine_handle<promise_type>;

  task() noexcept = default;
  explicit task(handle_type h) noexcept : h_(h) {}
  task(task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  bool valid() const noexcept { return static_cast<bool>(h_); }
  handle_type handle() const noexcept { return h_; }

  // Gives up ownership of the frame (a task cell takes it over).
  handle_type release() noexcept { return std::exchange(h_, {}); }

  // Destroys the frame (and, through it, every frame it is awaiting).
  void reset() noexcept {
    if (h_) detail::destroy_frame_opaquely(std::exchange(h_, {}));
  }

  class awaiter {
   public:
    explicit awaiter(handle_type h) noexcept : h_(h) {}
    bool await_ready() const noexcept { return !h_ || h_.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
      h_.promise().set_continuation(awaiting);
      return h_;  // symmetric transfer into the child
    }
    T await_resume() {
      WEFT_ASSERT(h_);
      return h_.promise().take();
    }

   private:
    handle_type h_;
  };

  awaiter operator co_await() && noexcept { return awaiter{h_}; }
  awaiter operator co_await() & noexcept { return awaiter{h_}; }

 private:
  handle_type h_{};
};

namespace detail {
template <class T>
task<T> task_promise<T>::get_return_object() noexcept {
  return task<T>{std::coroutine_handle<task_promise<T>>::from_promise(*this)};
}
inline task<void> task_promise<void>::get_return_object() noexcept {
  return task<void>{std::coroutine_handle<task_promise<void>>::from_promise(*this)};
}
}  // namespace detail

}  // namespace weft
