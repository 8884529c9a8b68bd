// weft/detail/join_handoff.hpp — the hand-off of a task's output from its completer to its joiner.
//
// Three pieces of a task cell take part: the state word (complete / join_interest / join_waker
// bits, see task_state.hpp), the join-waker slot (task_header) and the output slot (task_cell).
//
//   output slot   written once by the completer (owner thread) before `complete` is published
//                 (release); read or destroyed by the joiner only after it observed `complete`
//                 (acquire); destroyed by the completer instead when the join handle was dropped
//                 first. Exactly one party destroys the output: the joiner that took it (taking
//                 moves it out and destroys it; the handle then drops its interest with
//                 drop_join_interest_after_take, which destroys nothing), the joiner that drops
//                 an untaken one, or the completer. The slot has no engaged flag
//                 (output_slot): this protocol alone says when it holds an output.
//   waker slot    written by the joiner only while join_waker is clear and the task not complete;
//                 read-only for everyone while join_waker is set; the completer reads it (to wake
//                 by reference) only when it saw join_waker set at the moment it set `complete`.
//
// These functions are the whole protocol, shared by task_cell (joiner side), task_header::complete
// (completer side) and the Relacy model of the hand-off (models/src/join_handoff_model.cpp).
#pragma once

#include <new>
#include <optional>
#include <utility>

#include <weft/detail/task_state.hpp>
#include <weft/platform/assert.hpp>
#include <weft/platform/sync.hpp>
#include <weft/waker.hpp>

namespace weft::detail {

// Storage for one output with no engaged flag (a flag would cost a word per task): emplace
// constructs it, reset destroys it, and the join hand-off below says which party does each, once.
// Destroying the slot does not destroy a held output.
template <class Output>
class output_slot {
 public:
  output_slot() noexcept {}
  output_slot(const output_slot&) = delete;
  output_slot& operator=(const output_slot&) = delete;
  ~output_slot() {}

  template <class... Args>
  void emplace(Args&&... args) {
    ::new (static_cast<void*>(&value_)) Output(std::forward<Args>(args)...);
  }
  Output& operator*() noexcept { return value_; }
  const Output& operator*() const noexcept { return value_; }
  void reset() noexcept { value_.~Output(); }

 private:
  union {
    Output value_;
  };
};

}  // namespace weft::detail

namespace weft::detail::join_handoff {

// Joiner, after it observed `complete` with acquire: moves the output out (and destroys what is
// left in the slot). Always true. The handle must then use drop_join_interest_after_take.
template <class Output>
bool take_output(sync::cell<output_slot<Output>>& output, std::optional<Output>& out) {
  output.with_mut([&](output_slot<Output>& slot) {
    out.emplace(std::move(*slot));
    slot.reset();
  });
  return true;
}

// Joiner (any thread). Returns true with the output moved into `out` once the task completed;
// otherwise registers `w` to be woken at completion and returns false.
template <class Output>
bool poll_join(task_state& state, sync::cell<waker>& waker_slot, sync::cell<output_slot<Output>>& output,
               const waker& w, std::optional<Output>& out) {
  const task_state::word seen = state.load(std::memory_order_acquire);  // pairs with complete's release
  // Only the handle polls, and only before it dropped its interest: the output is taken at most
  // once (the slot has no flag of its own to say it was).
  WEFT_ASSERT(seen & task_state::join_interest);
  if (seen & task_state::complete) return take_output(output, out);
  if (seen & task_state::join_waker) {
    // The slot is read-only while join_waker is set; reading it concurrently with the
    // completer's read (it wakes by reference) is fine.
    const bool same = waker_slot.with([&](const waker& stored) { return stored.will_wake(w); });
    if (same) return false;
    if (!state.unset_join_waker()) return take_output(output, out);  // completed meanwhile
  }
  // join_waker is clear and the task not complete: the slot is ours.
  waker_slot.with_mut([&](waker& slot) { slot = w; });
  if (!state.set_join_waker()) return take_output(output, out);  // completed before we published
  return false;
}

// Join handle gone without taking the output (any thread): the handle's reference is released
// by the caller.
template <class Output>
void drop_join_interest(task_state& state, sync::cell<waker>& waker_slot,
                        sync::cell<output_slot<Output>>& output) noexcept {
  const task_state::word prior = state.drop_join_interest();
  if (prior & task_state::complete) {
    // We own the output: nobody else reads it any more.
    output.with_mut([](output_slot<Output>& slot) { slot.reset(); });
  } else if (prior & task_state::join_waker) {
    waker_slot.with_mut([](waker& slot) { slot.reset(); });  // cleared with the bit: ours
  }
}

// Join handle gone after poll_join handed it the output (any thread): the task is complete, the
// output already taken and destroyed; the waker slot is read-only and freed with the cell. The
// handle's reference goes in the same operation: true when it was the last, and the caller
// frees the cell.
inline bool drop_join_interest_after_take(task_state& state) noexcept {
  return state.drop_join_interest_and_reference();
}

// Completer (owner thread), with the output stored: publishes `complete`, then either destroys
// the output (no join handle any more) or wakes the registered joiner. `destroy_output` destroys
// the stored output.
template <class DestroyOutput>
void complete(task_state& state, const sync::cell<waker>& waker_slot, bool from_idle,
              DestroyOutput&& destroy_output) noexcept {
  const task_state::word prior = state.transition_to_complete(from_idle);
  if (!(prior & task_state::join_interest)) {
    std::forward<DestroyOutput>(destroy_output)();  // the handle is gone: nobody will read it
  } else if (prior & task_state::join_waker) {
    // The slot is read-only now (the joiner cannot touch it once complete is set): wake by
    // reference; the stored waker is freed with the cell.
    waker_slot.with([](const waker& w) { w.wake(); });
  }
}

}  // namespace weft::detail::join_handoff
