// io_handoff_model.cpp — Relacy model of the I/O completion hand-off (detail/io_handoff.hpp: the
// driver's complete() against the owner's ready()/result() or abandon()), the production header
// compiled against the model flavor of the seam.
//
// The operation is a heap object: the production io_handoff, the staging buffer the "kernel"
// writes before the driver completes, and the owner's registration (its waiter record, which the
// owner clears before it abandons). Destroying the operation writes both cells, as releasing a
// buffer and unlinking a record would.
//
// Invariants:
//   * exactly one party frees the operation: Relacy tracks the allocation, so nobody freeing it
//     is a MEMORY LEAK, both freeing it a DOUBLE FREE, and a party that touches it after the
//     other freed it an ACCESS TO FREED MEMORY (the first party never frees);
//   * the freeing party sees every write the other made first: otherwise the destructor's write
//     is a DATA RACE on the staging buffer (the completer's) or the registration (the owner's);
//   * the waiter reads the result and the staging buffer only after ready(), and sees the values
//     the completer stored (DATA RACE on the result or the buffer otherwise);
//   * a waiter that found the operation pending is woken (else it spins: LIVELOCK).
//
// The model asserts no free count of its own: its after() would run before Relacy's leak check
// and turn the MEMORY LEAK of a forgotten operation into a less specific USER ASSERT.
#include <cstdint>

#include <weft/detail/io_handoff.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::detail::io_handoff;

constexpr std::int64_t bytes_read = 42;      // the result the driver delivers
constexpr std::int64_t kernel_bytes = 0x5a;  // what the kernel leaves in the staging buffer
constexpr std::int64_t released = -1;        // what destroying the operation writes

struct operation {
  io_handoff handoff;
  weft::sync::cell<std::int64_t> staging{0};
  weft::sync::cell<int> registration{1};  // 1: the owner's waiter is registered

  ~operation() {
    staging.with_mut([](std::int64_t& b) { b = released; });
    registration.with_mut([](int& r) { r = 0; });
  }
};

// The waiter's wake-up: a production wake goes through the task state word, which publishes the
// waker's writes to the woken poll; release/acquire here stand for that.
struct wake_flag {
  weft::sync::atomic<int> wakes{0};

  void wake() { wakes.fetch_add(1, std::memory_order_release); }  // pairs with woken()
  bool woken() const { return wakes.load(std::memory_order_acquire) != 0; }
};

// The driver's side: the kernel fills the staging buffer, the driver completes, then does what
// complete() says. It never touches the operation after a wake_waiter answer: the waiter may
// already be freeing it.
void deliver(operation* op, wake_flag& waiter) {
  op->staging.with_mut([](std::int64_t& b) { b = kernel_bytes; });
  if (op->handoff.complete(bytes_read) == io_handoff::after_complete::free_operation) {
    delete op;
  } else {
    waiter.wake();
  }
}

// The owner drops the awaiting frame: it unregisters its waiter, then abandons.
void abandon(operation* op) {
  op->registration.with_mut([](int& r) { r = 0; });
  if (op->handoff.abandon() == io_handoff::after_abandon::free_operation) delete op;
}

// The owner takes the result of a completed operation, checks it, and frees the operation (the
// completer is done with it once ready() says completed).
void take_result(operation* op) {
  RL_ASSERT(op->handoff.result() == bytes_read);
  op->staging.with([](const std::int64_t& b) { RL_ASSERT(b == kernel_bytes); });
  delete op;
}

// Two threads: the driver completes the operation while the owner (Owner::run) awaits or drops
// it.
template <class Owner>
struct driver_vs_owner : rl::test_suite<driver_vs_owner<Owner>, 2> {
  operation* op = nullptr;
  wake_flag waiter;

  void before() { op = new operation; }

  void thread(unsigned index) {
    if (index == 0) {
      deliver(op, waiter);
    } else {
      Owner::run(op, waiter);
    }
  }
};

// The owner abandons (task aborted, loop shut down).
struct abandons {
  static void run(operation* op, const wake_flag&) { abandon(op); }
};

// The owner awaits the result: it polls ready(), and while pending waits for its wake and polls
// again.
struct waits {
  static void run(operation* op, const wake_flag& waiter) {
    if (!op->handoff.ready()) {
      while (!waiter.woken()) weft::platform::yield_thread();
      RL_ASSERT(op->handoff.ready());
    }
    take_result(op);
  }
};

// The owner polls once; if the result is not there it abandons (the task was aborted while
// waiting).
struct waits_then_abandons {
  static void run(operation* op, const wake_flag&) {
    if (op->handoff.ready()) {
      take_result(op);
    } else {
      abandon(op);
    }
  }
};

using complete_vs_abandon = driver_vs_owner<abandons>;
using complete_vs_wait = driver_vs_owner<waits>;
using complete_vs_wait_then_abandon = driver_vs_owner<waits_then_abandons>;

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "io_handoff", argc, argv,
      {
          {"complete_vs_abandon", &run_test<complete_vs_abandon>, {search::full()}},
          {"complete_vs_wait", &run_test<complete_vs_wait>, {search::context_bound(3), search::random(100000)}},
          {"complete_vs_wait_then_abandon", &run_test<complete_vs_wait_then_abandon>, {search::full()}},
      });
}
