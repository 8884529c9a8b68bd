// weft/detail/task_cell.hpp — the typed heap cell of a spawned task: header + root task + output.
//
// The output slot is written once by the owner thread, before `complete` is published (release),
// and read by the joiner only after it observed `complete` (acquire). Exactly one party destroys
// an unread output: the completer if the join handle was already gone, else the handle.
#pragma once

#include <optional>
#include <utility>

#include <weft/detail/task_header.hpp>
#include <weft/expected.hpp>
#include <weft/join_error.hpp>
#include <weft/task.hpp>

namespace weft::detail {

template <class T>
class task_cell final : public task_header {
 public:
  using output_type = expected<T, join_error>;

  task_cell(loop_shared* owner, std::uint64_t id, task<T>&& root) noexcept
      : task_header(owner, id, root.handle()), root_(std::move(root)) {}
  ~task_cell() override { WEFT_ASSERT(!root_.valid()); }

  // Joiner (any thread). Returns true with the output moved into `out` once the task completed;
  // otherwise registers `w` to be woken at completion and returns false.
  bool poll_join(const waker& w, std::optional<output_type>& out) {
    const task_state::word seen = state.load(std::memory_order_acquire);  // pairs with complete's release
    if (seen & task_state::complete) return take_output(out);
    if (seen & task_state::join_waker) {
      // The slot is read-only while join_waker is set; reading it concurrently with the
      // completer's read (it wakes by reference) is fine.
      const bool same = join_waker_slot.with([&](const waker& stored) { return stored.will_wake(w); });
      if (same) return false;
      if (!state.unset_join_waker()) return take_output(out);  // completed meanwhile
    }
    // join_waker is clear and the task not complete: the slot is ours.
    join_waker_slot.with_mut([&](waker& slot) { slot = w; });
    if (!state.set_join_waker()) return take_output(out);  // completed before we published
    return false;
  }

  // Join handle gone (any thread): the handle's reference is released by the caller.
  void drop_join_interest() noexcept {
    const task_state::word prior = state.drop_join_interest();
    if (prior & task_state::complete) {
      destroy_output();  // we own it: nobody else reads it any more
    } else if (prior & task_state::join_waker) {
      join_waker_slot.with_mut([](waker& slot) { slot.reset(); });  // cleared with the bit: ours
    }
  }

 private:
  bool take_output(std::optional<output_type>& out) {
    output_.with_mut([&](std::optional<output_type>& slot) {
      WEFT_ASSERT(slot.has_value());  // a handle reads its output at most once
      out.emplace(std::move(*slot));
      slot.reset();
    });
    return true;
  }

  void store_root_result() noexcept override {
    auto& promise = root_.handle().promise();
    output_.with_mut([&](std::optional<output_type>& slot) {
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
    });
  }
  void store_error(join_error error) noexcept override {
    output_.with_mut([&](std::optional<output_type>& slot) { slot.emplace(unexpected(std::move(error))); });
  }
  void destroy_root() noexcept override { root_.reset(); }
  void destroy_output() noexcept override {
    output_.with_mut([](std::optional<output_type>& slot) { slot.reset(); });
  }

  task<T> root_;
  sync::cell<std::optional<output_type>> output_;
};

}  // namespace weft::detail
