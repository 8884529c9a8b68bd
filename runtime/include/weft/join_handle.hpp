// weft/join_handle.hpp — the owner's view of a spawned task's outcome.
//
// co_await a join_handle (inside a task) or call join() (on a thread that is not driving the
// task's loop) to get expected<T, join_error>: the value, or panicked / cancelled / rejected.
// The result is delivered once; afterwards the handle is empty.
//
// Dropping a handle *detaches* the task: it keeps running, its loop (or runtime) stays its
// lifecycle owner and cancels it at shutdown, and its output is destroyed unread. (tokio detaches
// too; the async-runtime seed cancels on drop — weft offers that as the opt-in abort_on_drop
// guard, because a silently cancelled side effect is harder to debug than a detached one.)
#pragma once

#include <weft/compiler_support.hpp>

#include <optional>
#include <string>
#include <utility>

#include <weft/detail/task_cell.hpp>
#include <weft/detail/thread_waker.hpp>
#include <weft/expected.hpp>
#include <weft/join_error.hpp>

namespace weft {

namespace detail {
// True when the calling thread is one that polls tasks of this owner (loop or pool).
bool on_owner_thread(const task_owner* owner) noexcept;
}  // namespace detail

template <class T>
class [[nodiscard]] join_handle {
 public:
  using output_type = expected<T, join_error>;

  join_handle() noexcept = default;
  // Adopts a cell reference that carries join interest.
  explicit join_handle(detail::task_cell<T>* cell) noexcept : cell_(cell) {}
  // A handle for a task that was never admitted.
  static join_handle rejected(queue_error reason = queue_error::closed) {
    join_handle h;
    h.result_.emplace(unexpected(join_error::rejected_because(reason)));
    return h;
  }

  join_handle(join_handle&& other) noexcept
      : cell_(std::exchange(other.cell_, nullptr)), result_(std::move(other.result_)) {
    other.result_.reset();
  }
  join_handle& operator=(join_handle&& other) noexcept {
    if (this != &other) {
      detach();
      cell_ = std::exchange(other.cell_, nullptr);
      result_ = std::move(other.result_);
      other.result_.reset();
    }
    return *this;
  }
  join_handle(const join_handle&) = delete;
  join_handle& operator=(const join_handle&) = delete;
  ~join_handle() { detach(); }

  // True when awaiting would not suspend: the task completed (or was rejected).
  bool is_finished() const noexcept {
    if (result_) return true;
    return cell_ && (cell_->state.load(std::memory_order_acquire) & detail::task_state::complete);
  }

  // True while the handle still has an outcome to deliver.
  bool valid() const noexcept { return cell_ != nullptr || result_.has_value(); }

  // Requests cancellation. Any thread. The frame is destroyed on the task's own thread at its
  // next poll, the task completes as `cancelled` (unless it already completed), and the joiner
  // is woken. Aborting a finished task does nothing.
  void abort() noexcept {
    if (cell_) cell_->request_cancel();
  }

  // Leaf protocol (co_await inside a task).
  bool poll_ready(const waker& w) {
    if (result_) return true;
    if (!cell_) throw usage_error(std::string("awaiting ") + empty_handle_state);
    if (!cell_->poll_join(w, result_)) return false;
    release_cell(/*taken=*/true);
    return true;
  }
  output_type await_resume() {
    WEFT_ASSERT(result_.has_value());
    output_type out = std::move(*result_);
    result_.reset();
    return out;
  }

  // Blocks the calling thread until the task finishes. Throws usage_error when called on the
  // thread that must poll the task (that would deadlock) while it is still unfinished.
  output_type join() {
    if (!result_ && cell_) {
      detail::task_owner* const ran_on = cell_->owner();
      if (is_finished()) {
        // Finished: the output is taken without registering a waker, so nothing to park on.
        const bool taken = poll_ready(waker());
        WEFT_ASSERT(taken);
      } else {
        if (detail::on_owner_thread(ran_on)) {
          throw usage_error("join_handle::join() on the task's own loop thread would deadlock; co_await it");
        }
        detail::thread_waker_state* parker = detail::thread_waker_state::create();
        struct release_guard {
          detail::thread_waker_state* p;
          ~release_guard() { p->release(); }
        } guard{parker};
        const waker w = parker->make_waker();
        while (!poll_ready(w)) parker->park();
      }
      detail::last_joined_owner_slot::set(ran_on);  // a placement hint (worker_picker.hpp)
    }
    if (!result_) throw usage_error(std::string("joining ") + empty_handle_state);
    return await_resume();
  }

  // Detaches: the task runs on; its output is destroyed unread.
  void detach() noexcept {
    release_cell();
    result_.reset();
  }

  std::uint64_t task_id() const noexcept { return cell_ ? cell_->id() : 0; }

 private:
  // `taken`: poll_join handed this handle the output (so nothing is left in the cell to destroy).
  void release_cell(bool taken = false) noexcept {
    if (!cell_) return;
    std::exchange(cell_, nullptr)->release_join_handle(taken);
  }

  // The handle cannot tell which of these emptied it; the message names them all.
  static constexpr const char* empty_handle_state =
      "an empty join_handle (default-constructed, moved from, detached, or its result already taken)";

  detail::task_cell<T>* cell_ = nullptr;
  std::optional<output_type> result_;
};

// Aborts the task when dropped (opt-in cancel-on-drop).
template <class T>
class abort_on_drop {
 public:
  explicit abort_on_drop(join_handle<T> handle) noexcept : handle_(std::move(handle)) {}
  abort_on_drop(abort_on_drop&&) noexcept = default;
  abort_on_drop& operator=(abort_on_drop&&) noexcept = default;
  ~abort_on_drop() { handle_.abort(); }
  join_handle<T>& handle() noexcept { return handle_; }
  bool poll_ready(const waker& w) { return handle_.poll_ready(w); }
  auto await_resume() { return handle_.await_resume(); }

 private:
  join_handle<T> handle_;
};

}  // namespace weft
