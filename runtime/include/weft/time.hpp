// weft/time.hpp — timers for tasks: sleep, sleep_until, timeout, interval; and yield_now.
//
// All deadlines are on the seam clock (virtual in the simulator). A timer never fires before its
// deadline: expiry compares against clock::now() at the start of a turn, and the firing is a
// macrotask that marks the timer fired and wakes the sleeping task.
#pragma once

#include <weft/compiler_support.hpp>

#include <optional>
#include <type_traits>
#include <utility>

#include <weft/detail/timer_heap.hpp>
#include <weft/event_loop.hpp>
#include <weft/expected.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/clock.hpp>
#include <weft/task.hpp>
#include <weft/waker.hpp>

namespace weft {

namespace detail {
// The loop of the task being polled (throws usage_error outside a task).
event_loop& current_task_loop();

class sleep_timer final : public timer_node {
 public:
  void set_waker(const waker& w) {
    if (!waker_.will_wake(w)) waker_ = w;
  }

 private:
  void on_fire() override { std::move(waker_).wake(); }  // fires once: the waker is used up
  // Cancelled (its leaf is gone): the waker's task reference goes now, not at the deadline.
  void on_cancel() noexcept override { waker_.reset(); }
  waker waker_;
};
}  // namespace detail

// Leaf: ready once the seam clock has reached `deadline`.
class sleep_leaf {
 public:
  explicit sleep_leaf(instant deadline) noexcept : deadline_(deadline) {}
  sleep_leaf(sleep_leaf&& other) noexcept
      : deadline_(other.deadline_), loop_(other.loop_), timer_(std::exchange(other.timer_, nullptr)) {}
  sleep_leaf(const sleep_leaf&) = delete;
  sleep_leaf& operator=(const sleep_leaf&) = delete;
  sleep_leaf& operator=(sleep_leaf&&) = delete;
  ~sleep_leaf() {
    if (timer_) {
      loop_->cancel_timer(timer_);
      timer_->release();
    }
  }

  bool poll_ready(const waker& w) {
    if (timer_) {
      if (timer_->fired()) return true;
      timer_->set_waker(w);
      return false;
    }
    if (platform::clock::now() >= deadline_) return true;
    loop_ = &detail::current_task_loop();
    timer_ = new detail::sleep_timer();
    timer_->set_waker(w);
    loop_->arm_timer(timer_, deadline_);
    return false;
  }
  void await_resume() const noexcept {}
  instant deadline() const noexcept { return deadline_; }

 private:
  instant deadline_;
  event_loop* loop_ = nullptr;
  detail::sleep_timer* timer_ = nullptr;
};

inline sleep_leaf sleep_until(instant deadline) { return sleep_leaf(deadline); }
// A sleep too long for the clock's range ends never (the deadline saturates); a negative one at once.
inline sleep_leaf sleep(duration d) { return sleep_leaf(detail::deadline_after(platform::clock::now(), d)); }
template <class Rep, class Period>
sleep_leaf sleep(std::chrono::duration<Rep, Period> d) {
  return sleep(detail::saturating_ceil(d));
}

// Leaf: gives other ready work a turn, then resumes (the task goes to the back of the microtask
// queue).
class yield_leaf {
 public:
  bool poll_ready(const waker& w) {
    if (yielded_) return true;
    yielded_ = true;
    w.wake();
    return false;
  }
  void await_resume() const noexcept {}

 private:
  bool yielded_ = false;
};
inline yield_leaf yield_now() noexcept { return {}; }

namespace detail {
// `co_await yield_now()` in a task: the same steps as the generic leaf_awaiter, which would poll
// the leaf (it wakes the task and reports pending), then at the next poll poll it again (ready),
// through two calls by pointer and a waker made for each. Here the task wakes itself directly and
// waits on a point that poll_frame knows to be ready, so the next poll resumes the frame at once.
template <>
class leaf_awaiter<yield_leaf> {
 public:
  explicit leaf_awaiter(yield_leaf&) noexcept {}

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> awaiting) noexcept {
    task_header* task = current_task();
    WEFT_ASSERT(task != nullptr);  // leaves are awaited only from inside a polled weft task
    (void)coop_budget_take();      // a yield suspends either way; it uses up budget as any leaf
    task->schedule_poll();         // from inside its own poll: a flag, re-queued at the poll's end
    // The frame stands in for the leaf: it is what the next poll touches first (a pool's queue
    // prefetches it).
    task->suspend_on(leaf_poller{awaiting.address(), &leaf_ready_at_once}, awaiting);
  }
  void await_resume() {
    if (WEFT_FAULT_POINT(task_exception)) throw injected_fault{};
  }
};
}  // namespace detail

// Leaf: the current task's waker (a clone the caller may keep and call from any thread).
class waker_leaf {
 public:
  bool poll_ready(const waker& w) {
    waker_ = w;
    return true;
  }
  waker await_resume() { return std::move(waker_); }

 private:
  waker waker_;
};
inline waker_leaf current_waker() noexcept { return {}; }

// ---- timeout -----------------------------------------------------------------------------------

enum class timeout_error {
  elapsed,  // the deadline passed first; the operation was abandoned (a task: aborted)
};

namespace detail {
// A task<T> run as its own task on the current loop, awaited as a leaf. Dropping it before the
// task finished aborts the task.
template <class T>
class spawned_leaf {
 public:
  explicit spawned_leaf(task<T> t) noexcept : task_(std::move(t)) {}
  spawned_leaf(spawned_leaf&&) noexcept = default;
  ~spawned_leaf() {
    if (handle_.valid() && !handle_.is_finished()) handle_.abort();
  }
  bool poll_ready(const waker& w) {
    if (!started_) {
      started_ = true;
      handle_ = current_task_loop().spawn(std::move(task_));
    }
    return handle_.poll_ready(w);
  }
  T await_resume() {
    auto result = handle_.await_resume();
    if (!result) result.error().rethrow();
    if constexpr (!std::is_void_v<T>) return std::move(result).value();
  }

 private:
  task<T> task_;
  join_handle<T> handle_;
  bool started_ = false;
};

// A wrapped leaf's result as the value of an expected<result, E> (void results included).
template <class E, class Inner>
expected<decltype(std::declval<Inner&>().await_resume()), E> resume_inner(Inner& inner) {
  if constexpr (std::is_void_v<decltype(inner.await_resume())>) {
    inner.await_resume();
    return {};
  } else {
    return inner.await_resume();
  }
}

template <class A>
struct as_leaf {
  using type = A;
};
template <class T>
struct as_leaf<task<T>> {
  using type = spawned_leaf<T>;
};
}  // namespace detail

// Leaf: the inner operation's result, or timeout_error::elapsed if `deadline` comes first.
template <class Inner>
class timeout_leaf {
 public:
  using inner_result = decltype(std::declval<Inner&>().await_resume());
  using result_type = expected<inner_result, timeout_error>;

  timeout_leaf(instant deadline, Inner inner) : inner_(std::move(inner)), timer_(deadline) {}

  bool poll_ready(const waker& w) {
    if (inner_.poll_ready(w)) {
      elapsed_ = false;
      return true;
    }
    if (timer_.poll_ready(w)) {
      elapsed_ = true;
      return true;
    }
    return false;
  }
  result_type await_resume() {
    if (elapsed_) return unexpected(timeout_error::elapsed);
    return detail::resume_inner<timeout_error>(inner_);
  }

 private:
  Inner inner_;
  sleep_leaf timer_;
  bool elapsed_ = false;
};

// timeout(d, op): op is a task<T> (run as its own task on this loop and aborted on timeout) or a
// leaf awaitable taken by value (moved in).
template <class A>
auto timeout_at(instant deadline, A&& operation) {
  using plain = std::remove_cvref_t<A>;
  using inner = typename detail::as_leaf<plain>::type;
  static_assert(leaf_awaitable<inner>, "timeout needs a weft::task<T> or a leaf awaitable");
  return timeout_leaf<inner>(deadline, inner(std::forward<A>(operation)));
}
template <class A>
auto timeout(duration d, A&& operation) {
  return timeout_at(detail::deadline_after(platform::clock::now(), d), std::forward<A>(operation));
}
template <class Rep, class Period, class A>
auto timeout(std::chrono::duration<Rep, Period> d, A&& operation) {
  return timeout(detail::saturating_ceil(d), std::forward<A>(operation));
}

// ---- interval ----------------------------------------------------------------------------------

// Ticks every `period`. The first tick is immediate; a tick that is late does not shift the
// schedule (missed ticks complete at once, one per tick() call, until it caught up). A period
// that is not positive is a usage_error; ticks past the clock's range never come.
class interval {
 public:
  explicit interval(duration period) : period_(period), next_(platform::clock::now()) {
    if (period <= duration::zero()) throw usage_error("interval needs a positive period");
  }
  template <class Rep, class Period>
  explicit interval(std::chrono::duration<Rep, Period> period) : interval(detail::saturating_ceil(period)) {}

  sleep_leaf tick() {
    const instant at = next_;
    next_ = detail::deadline_after(next_, period_);
    return sleep_leaf(at);
  }
  duration period() const noexcept { return period_; }

 private:
  duration period_;
  instant next_;
};

// ---- free spawn ----------------------------------------------------------------------------

// Spawns on the loop of the current task (or the loop driving this thread).
template <class T>
join_handle<T> spawn(task<T> t) {
  return detail::current_task_loop().spawn(std::move(t));
}
// The same for a factory of a task (event_loop::spawn explains why a lambda with captures wants
// this form).
template <class F>
  requires detail::task_factory<std::decay_t<F>>
auto spawn(F&& factory) {
  return detail::current_task_loop().spawn(std::forward<F>(factory));
}

}  // namespace weft
