// weft/detail/task_cell.hpp — the typed heap cell of a spawned task: header + root task + output.
//
// The output slot is written once by the owner thread, before `complete` is published (release),
// and read by the joiner only after it observed `complete` (acquire). Exactly one party destroys
// an unread output: the completer if the join handle was already gone, else the handle.
#pragma once

#include <optional>
#include <utility>

#include <weft/detail/join_handoff.hpp>
#include <weft/detail/task_header.hpp>
#include <weft/expected.hpp>
#include <weft/join_error.hpp>
#include <weft/platform/trace.hpp>
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
  // otherwise registers `w` to be woken at completion and returns false. The protocol lives in
  // join_handoff.hpp (shared with the completer and the Relacy model).
  bool poll_join(const waker& w, std::optional<output_type>& out) {
    return join_handoff::poll_join(state, join_waker_slot, output_, w, out);
  }

  // Join handle gone (any thread): the handle's reference is released by the caller.
  void drop_join_interest() noexcept { join_handoff::drop_join_interest(state, join_waker_slot, output_); }

 private:
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
      WEFT_TRACE_TASK_DETAIL(outcome, this, slot->has_value() ? "value" : to_string(slot->error().get_kind()));
    });
  }
  void store_error(join_error error) noexcept override {
    WEFT_TRACE_TASK_DETAIL(outcome, this, to_string(error.get_kind()));
    output_.with_mut([&](std::optional<output_type>& slot) { slot.emplace(unexpected(std::move(error))); });
  }
  void destroy_root() noexcept override { root_.reset(); }
  std::exception_ptr stored_panic() const noexcept override {
    return output_.with([](const std::optional<output_type>& slot) -> std::exception_ptr {
      if (!slot || slot->has_value() || !slot->error().is_panicked()) return nullptr;
      return slot->error().exception();
    });
  }
  void destroy_output() noexcept override {
    output_.with_mut([](std::optional<output_type>& slot) { slot.reset(); });
  }

  task<T> root_;
  sync::cell<std::optional<output_type>> output_;
};

}  // namespace weft::detail
