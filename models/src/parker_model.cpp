// parker_model.cpp — Relacy model of weft::platform::parker (platform/parker.hpp), the production
// header compiled against the model flavor of the seam.
//
// Invariant: no lost wake-up, and a token publishes the unparker's writes.
//   * park() returns only after an unpark(); an unpark() that races park() — before it, between
//     its fast-path check and its CAS to `parked`, while it waits — is never lost (Relacy reports
//     DEADLOCK if the owner blocks forever);
//   * whatever the unparker wrote before unpark() is visible after park() returns: the payload is
//     a sync::cell, so a missing release/acquire pair is a DATA RACE on it;
//   * park_until() that times out (Relacy may time out any timed wait) keeps a racing token: the
//     next park() consumes it instead of blocking forever;
//   * an unpark() coalesced into the token the owner is consuming is acquired with it: its
//     unparker's writes are visible after park() returns.
#include <weft/models/harness.hpp>
#include <weft/platform/parker.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::platform::parker;

// Two threads: the owner parks once; the unparker publishes a payload and unparks once.
struct park_then_read : rl::test_suite<park_then_read, 2> {
  parker p;
  weft::sync::cell<int> payload{0};

  void thread(unsigned index) {
    if (index == 0) {
      p.park();
      payload.with([](const int& v) { RL_ASSERT(v == 42); });
    } else {
      payload.with_mut([](int& v) { v = 42; });
      p.unpark();
    }
  }
};

// Three threads: two unparkers race each other (their tokens coalesce) and the owner, who parks
// with a deadline first and without one afterwards when the deadline passed. At least one
// token survives, whichever order things happen in.
struct park_until_then_park : rl::test_suite<park_until_then_park, 3> {
  parker p;
  weft::sync::cell<int> first{0};
  weft::sync::cell<int> second{0};
  weft::sync::atomic<int> unparked{0};

  void thread(unsigned index) {
    if (index == 0) {
      if (!p.park_until(weft::platform::clock::now())) p.park();
      // A consumed token proves at least one unpark() happened before, with its payload.
      // relaxed is enough for the count: the token's acquire already ordered us.
      RL_ASSERT(unparked.load(std::memory_order_relaxed) >= 1);
    } else if (index == 1) {
      first.with_mut([](int& v) { v = 1; });
      unparked.fetch_add(1, std::memory_order_relaxed);
      p.unpark();
    } else {
      second.with_mut([](int& v) { v = 2; });
      unparked.fetch_add(1, std::memory_order_relaxed);
      p.unpark();
    }
  }
};

// Two threads, two rounds: the owner parks twice; the unparker unparks, waits until the owner
// acknowledged the first token, then unparks again. Exercises the parked -> empty -> parked cycle
// (a stale `parked` left behind would swallow the second token).
struct park_twice : rl::test_suite<park_twice, 2> {
  parker p;
  weft::sync::atomic<int> acknowledged{0};
  weft::sync::cell<int> payload{0};

  void thread(unsigned index) {
    if (index == 0) {
      p.park();
      // release: pairs with the unparker's acquire spin below.
      acknowledged.store(1, std::memory_order_release);
      p.park();
      payload.with([](const int& v) { RL_ASSERT(v == 2); });
    } else {
      p.unpark();
      // acquire: pairs with the owner's release acknowledgement.
      while (acknowledged.load(std::memory_order_acquire) == 0) weft::platform::yield_thread();
      payload.with_mut([](int& v) { v = 2; });
      p.unpark();
    }
  }
};

// Three threads: two unparkers each raise a flag and unpark; the owner parks until it has seen
// both. The flags are relaxed, so only the tokens' orders make them visible: an unpark that lands
// while the owner consumes the first token coalesces into it, and must be acquired with it (a
// consumption that erased it unread would leave the owner parked for good: DEADLOCK).
struct two_unparkers_both_seen : rl::test_suite<two_unparkers_both_seen, 3> {
  parker p;
  weft::sync::atomic<int> raised[2]{weft::sync::atomic<int>{0}, weft::sync::atomic<int>{0}};

  void thread(unsigned index) {
    if (index == 0) {
      // relaxed: the token's acquire is what orders the flags (see above).
      while (raised[0].load(std::memory_order_relaxed) == 0 || raised[1].load(std::memory_order_relaxed) == 0) {
        p.park();
      }
    } else {
      raised[index - 1].store(1, std::memory_order_relaxed);  // relaxed: unpark() publishes it
      p.unpark();
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "parker", argc, argv,
      {
          {"park_then_read", &run_test<park_then_read>, {search::full()}},
          {"park_until_then_park", &run_test<park_until_then_park>,
           {search::context_bound(3), search::random(100000)}},
          {"park_twice", &run_test<park_twice>, {search::context_bound(3), search::random(100000)}},
          {"two_unparkers_both_seen", &run_test<two_unparkers_both_seen>,
           {search::context_bound(3), search::random(100000)}},
      });
}
