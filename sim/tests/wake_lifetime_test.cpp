// wake_lifetime_test.cpp — a wake by value from a thread outside the loop hands the loop the last
// reference that keeps the loop's shared part alive. The simulator may run the owner between the
// waker's push and its notification: the owner polls the task, which finishes and is freed, and
// destroys the loop. The waker must still own a reference when it notifies (loop_shared.cpp,
// submit_internal); without one, its notify reads freed memory, which the sanitizer build of this
// suite reports. The same for a task of a stealing pool woken from outside the pool.
#include <cstddef>

#include <gtest/gtest.h>

#include <weft/platform/sync.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/check.hpp>
#include <weft/weft.hpp>

namespace {

using weft::sim::check;
using weft::sim::check_result;

// Pending at its first poll, where it hands a clone of the task's waker to another thread; ready
// at every later poll.
class park_once {
 public:
  park_once(weft::waker& slot, weft::sync::atomic<bool>& stored) noexcept : slot_(slot), stored_(stored) {}
  bool poll_ready(const weft::waker& w) {
    if (parked_) return true;
    parked_ = true;
    slot_ = w;
    // release: pairs with the acquire in the waking thread, which then reads the slot.
    stored_.store(true, std::memory_order_release);
    return false;
  }
  void await_resume() const noexcept {}

 private:
  weft::waker& slot_;
  weft::sync::atomic<bool>& stored_;
  bool parked_ = false;
};

// Half the wakes hold their notification back (delayed_notification.hpp), so the owner often runs
// to its teardown inside that window.
weft::sim::options delayed_notifications() {
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::delayed_wake)] = weft::sim::ppm_one / 2;
  return o;
}

// The other thread: waits for the waker, then wakes the task with it by value.
weft::platform::thread wake_from_outside(weft::waker& slot, weft::sync::atomic<bool>& stored) {
  return weft::platform::thread([&slot, &stored] {
    // acquire: pairs with the release store in park_once.
    while (!stored.load(std::memory_order_acquire)) weft::platform::yield_thread();
    std::move(slot).wake();
  });
}

TEST(wake_lifetime, a_loop_destroyed_while_its_waker_notifies) {
  const check_result r = check({.seeds = 400, .sim = delayed_notifications(), .name = "wake_lifetime_loop"}, [](weft::sim::context&) {
    weft::waker slot;
    weft::sync::atomic<bool> stored{false};
    bool done = false;
    weft::platform::thread waker;
    {
      weft::event_loop loop;
      // Detached: the wake's queue entry, not a handle, keeps the task (and so the loop's shared part).
      (void)loop.spawn([&slot, &stored, &done]() -> weft::task<void> {
        co_await park_once(slot, stored);
        done = true;
      });
      waker = wake_from_outside(slot, stored);
      loop.run_until([&done] { return done; });
    }
    waker.join();
  });
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_EQ(r.seeds_run, 400u);
}

TEST(wake_lifetime, a_pool_stopped_while_its_waker_notifies) {
  const check_result r = check({.seeds = 200, .sim = delayed_notifications(), .name = "wake_lifetime_pool"}, [](weft::sim::context&) {
    weft::waker slot;
    weft::sync::atomic<bool> stored{false};
    weft::platform::thread waker;
    {
      weft::stealing_pool pool = weft::stealing_pool::builder().workers(1).build();
      (void)pool.spawn([&slot, &stored]() -> weft::task<void> { co_await park_once(slot, stored); });
      waker = wake_from_outside(slot, stored);
      (void)std::move(pool).stop_graceful();
    }
    waker.join();
  });
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_EQ(r.seeds_run, 200u);
}

}  // namespace
