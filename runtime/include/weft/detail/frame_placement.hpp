// weft/detail/frame_placement.hpp — placing a factory task's coroutine frame in its cell's block.
//
// A task spawned from a factory has a cell before it has a frame: the factory runs at the first
// poll. Its cell is allocated with room in front of it, as large as the frame the same factory
// type made last time (factory_cell learns it), and while the factory runs the poll offers that
// room to the first coroutine frame of exactly that size (round_frame). The task then costs one
// block, [frame][cell], instead of two.
//
// Invariants:
//   * An offer lives on the stack of the poll that makes it (frame_offer) and is reachable only
//     through the calling thread's slot, so only frames allocated by that thread, inside the
//     factory call, can take it; at most one frame takes it.
//   * A frame that took an offer knows it (the placed bit of its promise, task.hpp), and its
//     deallocation goes to frame_placement_released instead of the block recycler. The cell sits
//     at the frame's address plus round_frame(size): the deallocation finds it from its own two
//     arguments, whichever thread it runs on.
//   * The cell outlives every frame placed in its block: the root frame is destroyed by the cell
//     itself before it completes; any other frame that took the room (the factory returned a
//     different task) holds a reference on the cell until it is deallocated (placed_frame_state).
#pragma once

#include <cstddef>

#include <weft/platform/thread.hpp>

namespace weft::detail {

// Frames up to this size are placed in their cell's block; a larger one gets a block of its own
// (an empty room costs a cell's worth of idle bytes per task, so it must stay small).
inline constexpr std::size_t placed_frame_max_bytes = 256;
// The room's granularity: a cell of alignment up to 8 follows a frame of any size rounded to it.
inline constexpr std::size_t placed_frame_align = 8;

constexpr std::size_t round_frame(std::size_t size) noexcept {
  return (size + placed_frame_align - 1) / placed_frame_align * placed_frame_align;
}

// The room a factory's first poll offers, and what the allocations inside the factory did.
struct frame_offer {
  void* room = nullptr;         // start of the block; null: nothing offered (learning only)
  std::size_t room_bytes = 0;   // a frame of round_frame(size) == room_bytes takes it
  void* taken = nullptr;        // the frame placed in the room, if one was
  void* first_frame = nullptr;  // the first frame allocated during the factory call, and its size
  std::size_t first_size = 0;
  frame_offer* outer = nullptr;  // an offer of an enclosing factory call on this thread

  // The slot is per thread (per simulated thread in the simulator, whose factories may block).
  struct slot_tag;
  using slot = platform::thread_slot<frame_offer, slot_tag>;

  frame_offer(void* room_start, std::size_t bytes) noexcept : room(room_start), room_bytes(bytes), outer(slot::get()) {
    slot::set(this);
  }
  frame_offer(const frame_offer&) = delete;
  frame_offer& operator=(const frame_offer&) = delete;
  ~frame_offer() { slot::set(outer); }

  // A coroutine frame of `size` bytes is being allocated during the factory call: the room, or
  // null (the caller allocates it elsewhere and tells `allocated`).
  void* take(std::size_t size) noexcept {
    if (room != nullptr && taken == nullptr && first_frame == nullptr && round_frame(size) == room_bytes) {
      taken = room;
      allocated(room, size);
      return room;
    }
    return nullptr;
  }
  void allocated(void* frame, std::size_t size) noexcept {
    if (first_frame == nullptr) {
      first_frame = frame;
      first_size = size;
    }
  }
};

// A placed frame was destroyed (its promise's operator delete, any thread): tells the cell in
// the same block. Out of line (task_cell.cpp).
void frame_placement_released(void* frame, std::size_t size) noexcept;

}  // namespace weft::detail
