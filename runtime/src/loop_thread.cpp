// loop_thread.cpp — spawn_loop_thread: a child thread with its own loop, observed by the parent.
//
// Start-up handshake: the parent waits (briefly) until the child has built its loop and
// published its thread_handle, so the handle returned by spawn_loop_thread is usable at once. Exit:
// the child's loop finishes run() and is destroyed, then the child sends an *internal* notice to
// the parent (internal: a capacity bound must never lose it); the parent's macrotask joins the
// thread and lets the parent's run() finish.
#include <functional>

#include <weft/event_loop.hpp>

namespace weft {

bool loop_thread_handle::is_finished() const noexcept {
  // acquire: pairs with the release store at the end of the child thread.
  return child_ && child_->finished.load(std::memory_order_acquire);
}

loop_thread_handle event_loop::start_child(detail::runnable* entry) {
  auto child = std::make_shared<detail::loop_thread_record>();
  thread_handle parent = handle();
  std::shared_ptr<telemetry_sink> sink = shared_->telemetry_ptr();
  try {
    child->thread = platform::thread([child, parent, entry, sink]() mutable {
      {
        event_loop::options opts;
        opts.telemetry = std::move(sink);  // the child reports where its parent does
        event_loop loop(std::move(opts));
        {
          sync::lock_guard<sync::mutex> hold(child->lock);
          child->child_handle = loop.handle();
          child->ready = true;
        }
        child->ready_cv.notify_all();
        loop.macrotasks_.push_back(entry);
        loop.run();
      }
      // release: pairs with the acquire in loop_thread_handle::is_finished().
      child->finished.store(true, std::memory_order_release);
      detail::loop_thread_record* raw = child.get();
      parent.shared()->submit_internal(new detail::callback_runnable<std::function<void()>>(
          std::function<void()>([raw] { event_loop::current()->child_exited(raw); })));
    });
  } catch (...) {
    entry->discard();
    throw;
  }
  {
    sync::unique_lock<sync::mutex> hold(child->lock);
    while (!child->ready) child->ready_cv.wait(hold);
  }
  children_.push_back(child);
  ++live_children_;
  return loop_thread_handle(child, child->child_handle);
}

void event_loop::child_exited(detail::loop_thread_record* child) {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->get() != child) continue;
    if ((*it)->thread.joinable()) (*it)->thread.join();
    children_.erase(it);
    WEFT_ASSERT(live_children_ > 0);
    --live_children_;
    return;
  }
  WEFT_ASSERT(false);  // a notice for a child we do not know
}

}  // namespace weft
