// weft/detail/blocking_job.hpp — one spawn_blocking call: the callback on a pool thread, and the
// leaf its awaiting task polls.
//
// The state is shared by the job (pool thread) and the awaiting task (its worker), guarded by a
// mutex — the blocking path is not a hot path. Phases:
//   queued ─begin()→ running ─finish()→ done            (the task wakes and takes the result)
//   queued ─discard()→ discarded                         (shutdown: the callback never runs)
//   queued ─abandon()→ abandoned ─begin() fails          (the task went away: the callback never runs)
//   running/done ─abandon()→ the result is dropped when the job ends
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <weft/detail/runnable.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/sync.hpp>
#include <weft/task.hpp>
#include <weft/waker.hpp>

namespace weft {

namespace detail {

template <class R>
class blocking_state {
 public:
  using stored = std::conditional_t<std::is_void_v<R>, bool, R>;

  // Pool thread: false when the callback must not run (the awaiting task is gone).
  bool begin() {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (phase_ != phase::queued) return false;
    phase_ = phase::running;
    return true;
  }
  template <class... V>
  void finish_value(V&&... v) {
    finish([&] { value_.emplace(std::forward<V>(v)...); });
  }
  void finish_error(std::exception_ptr e) {
    finish([&] { error_ = std::move(e); });
  }
  // Shutdown: the callback will never run.
  void discard() {
    waker to_wake;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      if (phase_ == phase::queued) phase_ = phase::discarded;
      to_wake = std::move(waiter_);
    }
    std::move(to_wake).wake();
  }
  // The awaiting task is gone.
  void abandon() {
    waker dropped;
    sync::lock_guard<sync::mutex> hold(lock_);
    if (phase_ == phase::queued) phase_ = phase::abandoned;
    dropped = std::move(waiter_);
  }
  // The awaiting task: ready once the job finished or was discarded.
  bool poll(const waker& w) {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (phase_ == phase::done || phase_ == phase::discarded) return true;
    if (!waiter_.will_wake(w)) waiter_ = w;
    return false;
  }
  R take() {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (phase_ == phase::discarded) throw operation_cancelled();
    WEFT_ASSERT(phase_ == phase::done);
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<R>) {
      WEFT_ASSERT(value_.has_value());
      return std::move(*value_);
    }
  }

 private:
  enum class phase { queued, running, done, discarded, abandoned };
  template <class Store>
  void finish(Store&& store) {
    waker to_wake;
    {
      sync::lock_guard<sync::mutex> hold(lock_);
      WEFT_ASSERT(phase_ == phase::running);
      store();
      phase_ = phase::done;
      to_wake = std::move(waiter_);
    }
    std::move(to_wake).wake();  // outside the lock: the wake may take the owner's inbox lock
  }

  sync::mutex lock_;
  phase phase_ = phase::queued;
  std::optional<stored> value_;
  std::exception_ptr error_;
  waker waiter_;
};

template <class R, class F>
class blocking_job final : public runnable {
 public:
  template <class G>
  blocking_job(std::shared_ptr<blocking_state<R>> state, G&& fn)
      : runnable(runnable_kind::callback), state_(std::move(state)), fn_(std::forward<G>(fn)) {}

  // Never throws: the callback's exception becomes the job's result.
  void run() noexcept override {
    if (state_->begin()) {
      try {
        if constexpr (std::is_void_v<R>) {
          fn_();
          state_->finish_value(true);
        } else {
          state_->finish_value(fn_());
        }
      } catch (...) {
        state_->finish_error(std::current_exception());
      }
    }
    delete this;
  }
  void discard() noexcept override {
    state_->discard();
    delete this;
  }

 private:
  std::shared_ptr<blocking_state<R>> state_;
  F fn_;
};

template <class R>
class blocking_leaf {
 public:
  explicit blocking_leaf(std::shared_ptr<blocking_state<R>> state) noexcept : state_(std::move(state)) {}
  bool poll_ready(const waker& w) { return state_->poll(w); }
  R await_resume() { return state_->take(); }

 private:
  std::shared_ptr<blocking_state<R>> state_;
};

// Abandons the job when the awaiting task's frame is destroyed. It is a parameter of the
// coroutine, not a local of its body, so it lives in the frame from creation: a task cancelled
// (aborted, or refused) before its first poll never runs its body, and must abandon all the same.
template <class R>
class abandon_on_destroy {
 public:
  explicit abandon_on_destroy(std::shared_ptr<blocking_state<R>> state) noexcept : state_(std::move(state)) {}
  abandon_on_destroy(abandon_on_destroy&& other) noexcept : state_(std::move(other.state_)) {}
  abandon_on_destroy(const abandon_on_destroy&) = delete;
  abandon_on_destroy& operator=(const abandon_on_destroy&) = delete;
  abandon_on_destroy& operator=(abandon_on_destroy&&) = delete;
  ~abandon_on_destroy() {
    if (state_) state_->abandon();  // moved-from guards (the argument the frame copied) do nothing
  }
  const std::shared_ptr<blocking_state<R>>& state() const noexcept { return state_; }

 private:
  std::shared_ptr<blocking_state<R>> state_;
};

template <class R>
task<R> await_blocking_guarded(abandon_on_destroy<R> guard) {
  co_return co_await blocking_leaf<R>(guard.state());
}

// The task that awaits a blocking job on a worker; if it goes away first (even unpolled), the job
// is abandoned.
template <class R>
task<R> await_blocking(std::shared_ptr<blocking_state<R>> state) {
  return await_blocking_guarded<R>(abandon_on_destroy<R>(std::move(state)));
}

}  // namespace detail
}  // namespace weft
