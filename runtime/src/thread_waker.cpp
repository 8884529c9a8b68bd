// thread_waker.cpp — the thread waker used by blocking joins (detail/thread_waker.hpp).
#include <weft/detail/thread_waker.hpp>

namespace weft::detail {

// No wake_by_value: unpark, then drop, is all a used-up thread waker can do.
const waker_vtable thread_waker_state::vtable{&thread_waker_state::clone, &thread_waker_state::wake_by_ref,
                                              &thread_waker_state::drop, nullptr};

waker thread_waker_state::make_waker() noexcept { return waker(clone(this)); }

raw_waker thread_waker_state::clone(void* data) noexcept {
  auto* self = static_cast<thread_waker_state*>(data);
  // relaxed: the caller holds a reference.
  self->refs_.fetch_add(1, std::memory_order_relaxed);
  return raw_waker{&vtable, data};
}

void thread_waker_state::wake_by_ref(void* data) noexcept { static_cast<thread_waker_state*>(data)->parker_.unpark(); }

void thread_waker_state::drop(void* data) noexcept { static_cast<thread_waker_state*>(data)->release(); }

void thread_waker_state::release() noexcept {
  // acq_rel: the last owner sees all others' writes before deleting.
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace weft::detail
