// A program built the way a user builds against an installed weft: only <weft/weft.hpp> and the
// flags from `pkg-config --cflags --libs weft`. It awaits an aggregate leaf that owns a
// shared_ptr (built in the co_await operand) and leaves the wait by resume, abort, loop
// destruction and runtime stop; each must release the pointer exactly once. Exits 1 otherwise.
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include <weft/weft.hpp>

namespace {

class door {
 public:
  bool poll_ready(const weft::waker& w) {
    std::lock_guard<std::mutex> hold(lock_);
    if (open_) return true;
    waiter_ = w;
    waiting_.store(true, std::memory_order_release);  // pairs with the acquire in is_waited_on
    return false;
  }
  void open() {
    weft::waker w;
    {
      std::lock_guard<std::mutex> hold(lock_);
      open_ = true;
      w = std::move(waiter_);
    }
    if (w.valid()) std::move(w).wake();
  }
  bool is_waited_on() const { return waiting_.load(std::memory_order_acquire); }

 private:
  std::mutex lock_;
  bool open_ = false;
  weft::waker waiter_;
  std::atomic<bool> waiting_{false};
};

struct door_leaf {
  std::shared_ptr<door> d;
  bool poll_ready(const weft::waker& w) { return d->poll_ready(w); }
  void await_resume() const noexcept {}
};

weft::task<int> wait_at(std::shared_ptr<door> d) {
  co_await door_leaf{d};
  co_return 1;
}

bool released(const char* how, const std::shared_ptr<door>& d) {
  const long owners = d.use_count();
  std::printf("%-22s owners left: %ld\n", how, owners);
  return owners == 1;
}

}  // namespace

int main() {
  bool ok = true;
  {
    auto d = std::make_shared<door>();
    {
      weft::event_loop loop;
      auto h = loop.spawn(wait_at(d));
      loop.run_until_stalled();
      d->open();
      loop.run();
      ok = h.join().value_or(0) == 1 && ok;
    }
    ok = released("resumed", d) && ok;
  }
  {
    auto d = std::make_shared<door>();
    {
      weft::event_loop loop;
      auto h = loop.spawn(wait_at(d));
      loop.run_until_stalled();
      h.abort();
      loop.run();
      ok = !h.join() && ok;
    }
    d->open();  // drops the door's waker, the last reference to the task's cell
    ok = released("aborted", d) && ok;
  }
  {
    auto d = std::make_shared<door>();
    {
      weft::event_loop loop;
      (void)loop.spawn(wait_at(d));
      loop.run_until_stalled();
    }
    d->open();
    ok = released("loop destroyed", d) && ok;
  }
  {
    auto d = std::make_shared<door>();
    {
      auto rt = weft::runtime::builder().workers(2).build();
      auto h = rt.scheduler().spawn([d] { return wait_at(d); });
      while (!d->is_waited_on()) std::this_thread::yield();
      ok = std::move(rt).stop().counts().tasks_cancelled == 1 && ok;
      ok = !h.join() && ok;
    }
    d->open();
    ok = released("runtime stopped", d) && ok;
  }
  return ok ? 0 : 1;
}
