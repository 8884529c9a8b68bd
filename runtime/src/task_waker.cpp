// task_waker.cpp — a task's wakers: the vtables that turn a wake into a poll of its cell.
//
// The borrowed waker is the cell's own view of itself and owns no reference; cloning either kind
// yields an owning waker, which holds one reference to the cell until it is dropped or used up.
#include <weft/detail/task_header.hpp>
#include <weft/waker.hpp>

namespace weft::detail {

namespace {
raw_waker owning_clone(void* data) noexcept;
void owning_wake(void* data) noexcept { static_cast<task_header*>(data)->schedule_poll(); }
void owning_drop(void* data) noexcept { static_cast<task_header*>(data)->release(); }
void owning_wake_by_value(void* data) noexcept { static_cast<task_header*>(data)->schedule_poll_by_value(); }
void borrowed_drop(void*) noexcept {}

constexpr waker_vtable owning_vtable{&owning_clone, &owning_wake, &owning_drop, &owning_wake_by_value};

raw_waker owning_clone(void* data) noexcept {
  static_cast<task_header*>(data)->ref_inc();
  return raw_waker{&owning_vtable, data};
}
}  // namespace

// A borrowed waker owns no reference: used up, it just wakes.
constinit const waker_vtable task_borrowed_waker_vtable{&owning_clone, &owning_wake, &borrowed_drop, &owning_wake};

waker task_header::make_waker() noexcept { return waker(owning_clone(this)); }

}  // namespace weft::detail
