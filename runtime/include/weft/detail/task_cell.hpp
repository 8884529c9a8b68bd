// weft/detail/task_cell.hpp — the typed heap cell of a spawned task: header + output, and the
// factory_cell that also holds the factory a task is spawned from.
//
// The output slot is written once by the owner thread, before `complete` is published (release),
// and read by the joiner only after it observed `complete` (acquire). Exactly one party destroys
// the output: the completer if the join handle was already gone, else the handle (join_handoff.hpp).
// An output that fits (output_shares_storage: `void` and most small T) is kept in the header's
// shared storage, where the wait point was until then (task_header.hpp); a larger one in a member.
#pragma once

#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include <weft/detail/join_handoff.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/expected.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/trace.hpp>
#include <weft/task.hpp>

namespace weft::detail {

template <class T>
class task_cell : public task_header {
 public:
  using output_type = expected<T, join_error>;
  using output_cell = sync::cell<output_slot<output_type>>;
  static constexpr bool output_shares_storage =
      sizeof(output_cell) <= shared_storage_bytes && alignof(output_cell) <= shared_storage_align;

  // The cell takes over the frame of `root` (valid).
  task_cell(task_owner* owner, std::uint32_t id, task<T>&& root) noexcept
      : task_header(owner, id, root.release()) {}
  ~task_cell() override { WEFT_ASSERT(!root()); }

  // Joiner (any thread). Returns true with the output moved into `out` once the task completed;
  // otherwise registers `w` to be woken at completion and returns false. The protocol lives in
  // join_handoff.hpp (shared with the completer and the Relacy model).
  bool poll_join(const waker& w, std::optional<output_type>& out) {
    return join_handoff::poll_join(state, join_waker_slot, output(), w, out);
  }

  // Join handle gone (any thread), with the handle's reference. `taken`: poll_join already
  // handed the handle the output; then one atomic operation drops both.
  void release_join_handle(bool taken) noexcept {
    if (taken) {
      if (join_handoff::drop_join_interest_after_take(state)) delete this;
    } else {
      join_handoff::drop_join_interest(state, join_waker_slot, output());
      release();
    }
  }

 protected:
  // A cell made without a frame (factory_cell) starts with a null root.
  task_cell(task_owner* owner, std::uint32_t id) noexcept : task_header(owner, id, nullptr) {}

  bool start_root() noexcept override {
    WEFT_ASSERT(false);  // only a factory_cell starts without a frame
    return false;
  }

  // Takes the frame of a task a factory returned: true when it is a frame, else the output says why.
  bool adopt_root(task<T>&& made) noexcept {
    if (!made.valid()) {
      store_error(join_error::from_panic(std::make_exception_ptr(usage_error("a task factory returned an empty task"))));
      return false;
    }
    set_root(made.release());
    return true;
  }

  void store_error(join_error error) noexcept override {
    WEFT_TRACE_TASK_DETAIL(outcome, this, to_string(error.get_kind()));
    begin_output().with_mut([&](output_slot<output_type>& slot) { slot.emplace(unexpected(std::move(error))); });
  }

 private:
  void store_root_result() noexcept override {
    auto& promise = std::coroutine_handle<task_promise<T>>::from_address(root().address()).promise();
    begin_output().with_mut([&](output_slot<output_type>& slot) {
      try {
        if constexpr (std::is_void_v<T>) {
          promise.take();
          slot.emplace();
        } else {
          slot.emplace(promise.take());
        }
      } catch (const operation_cancelled&) {
        slot.emplace(unexpected(join_error(join_error::cancelled)));
      } catch (...) {
        slot.emplace(unexpected(join_error::from_panic(std::current_exception())));
      }
      WEFT_TRACE_TASK_DETAIL(outcome, this, (*slot).has_value() ? "value" : to_string((*slot).error().get_kind()));
    });
  }
  // Both only between the store and the destruction of the output (the completer's side).
  std::exception_ptr stored_panic() const noexcept override {
    return output().with([](const output_slot<output_type>& slot) -> std::exception_ptr {
      const output_type& out = *slot;
      if (out.has_value() || !out.error().is_panicked()) return nullptr;
      return out.error().exception();
    });
  }
  void destroy_output() noexcept override {
    output().with_mut([](output_slot<output_type>& slot) { slot.reset(); });
  }

  // The output's cell; it exists from begin_output (the store) on. Before that, in the shared
  // case, its bytes are the wait point's, and nobody touches it: the protocol reads it only after
  // `complete`.
  output_cell& output() noexcept {
    if constexpr (output_shares_storage) {
      return *std::launder(static_cast<output_cell*>(shared_storage()));
    } else {
      return own_output_;
    }
  }
  const output_cell& output() const noexcept { return const_cast<task_cell*>(this)->output(); }
  // Owner thread, storing the output (once): in the shared case this ends the wait point's life.
  output_cell& begin_output() noexcept {
    if constexpr (output_shares_storage) ::new (shared_storage()) output_cell();
    return output();
  }

  struct no_own_output {};
  [[no_unique_address]] std::conditional_t<output_shares_storage, no_own_output, output_cell> own_output_;
};

// Where a factory_cell keeps its factory. An empty, trivially destructible factory (a lambda
// without captures, the common case) takes no space and needs no destruction; any other factory
// is constructed in place and destroyed explicitly, right after the frame (the header's
// factory_alive_ says whether it is constructed).
template <class F, bool Stateless = std::is_empty_v<F> && std::is_trivially_destructible_v<F>>
class factory_slot {
 public:
  template <class G>
  explicit factory_slot(G&& factory) {
    ::new (static_cast<void*>(&factory_)) F(std::forward<G>(factory));
  }
  factory_slot(const factory_slot&) = delete;
  factory_slot& operator=(const factory_slot&) = delete;
  ~factory_slot() {}
  F& get() noexcept { return factory_; }
  void destroy() noexcept { factory_.~F(); }

 private:
  union {
    F factory_;
  };
};
template <class F>
class factory_slot<F, true> {
 public:
  template <class G>
  explicit factory_slot(G&& factory) : factory_(std::forward<G>(factory)) {}
  F& get() noexcept { return factory_; }
  void destroy() noexcept {}

 private:
  [[no_unique_address]] F factory_;
};

// A cell spawned from a factory: no frame until the first poll, which invokes the factory on the
// owner thread and runs the task it returns. The factory (a lambda's captures, say) lives in the
// cell until just after the frame is destroyed, so a coroutine lambda's frame may refer to its
// captures for its whole life, and it is destroyed where the task ran. Keeping it in the cell costs
// no second frame, as a wrapper coroutine `co_return co_await factory();` would.
template <class F>
class factory_cell final : public task_cell<typename std::invoke_result_t<F&>::value_type> {
  using T = typename std::invoke_result_t<F&>::value_type;

 public:
  template <class G>
  factory_cell(task_owner* owner, std::uint32_t id, G&& factory) noexcept(std::is_nothrow_constructible_v<F, G&&>)
      : task_cell<T>(owner, id), factory_(std::forward<G>(factory)) {
    this->factory_alive_ = true;
  }
  ~factory_cell() override { WEFT_ASSERT(!this->factory_alive_); }

 private:
  bool start_root() noexcept override {
    WEFT_ASSERT(this->factory_alive_);
    try {
      return this->adopt_root(std::invoke(factory_.get()));
    } catch (const operation_cancelled&) {
      this->store_error(join_error(join_error::cancelled));
    } catch (...) {
      this->store_error(join_error::from_panic(std::current_exception()));
    }
    return false;
  }
  void destroy_root() noexcept override {
    this->destroy_frame();  // the frame first: it may refer to the factory's captures
    if (this->factory_alive_) {
      this->factory_alive_ = false;
      factory_.destroy();
    }
  }

  [[no_unique_address]] factory_slot<F> factory_;
};

}  // namespace weft::detail
