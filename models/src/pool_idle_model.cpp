// pool_idle_model.cpp — Relacy model of the stealing pool's park/wake handshake: the production
// weft::detail::pool_idle (detail/pool_idle.hpp) and weft::detail::pool_injector
// (detail/pool_injector.hpp), with one weft::platform::parker per worker, driven the way
// runtime/src/pool_core.cpp drives them (its worker loop with the searching hand-off, park() and
// wake_one(), stop_workers()). The workers take work from the injector only: the local deques
// have their own model.
//
// Invariants:
//   * no lost wake-up: a submission pushed while every worker is on its way to sleep is run —
//     either the worker's re-check after announce() sees the injector's count, or the
//     submitter's wake_one() sees the worker listed and unparks it, or the submitter skips the
//     wake because a worker is searching, and that search (or the one it hands off to when it
//     finds other work) sees the item; a worker parked forever while an item waits (or while the
//     pool stops) is a Relacy DEADLOCK;
//   * wake_one() returns only a listed worker, and unlists it: a worker is never returned twice
//     for one announce() (the model counts both);
//   * every item is run exactly once (twice fails the item's assertion; never, the check in
//     after()), or, when the pool stops first, stays queued and is discarded at the stop;
//   * a worker sees what was written to an item before its push: the payload is a sync::cell,
//     so a missing release/acquire between push and pop is a DATA RACE.
#include <cstddef>
#include <utility>

#include <weft/detail/pool_idle.hpp>
#include <weft/detail/pool_injector.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/parker.hpp>

namespace {

using weft::detail::pool_idle;
using weft::detail::pool_injector;
using weft::detail::runnable;

constexpr int published = 1;
constexpr std::size_t batch_max = 2;  // one pop_batch's bound; production: pool_injector_batch_max

// An item of the model. The counts are plain ints: Relacy runs every thread on one OS thread,
// and they only feed the assertions, not the protocol under test.
class item final : public runnable {
 public:
  item() noexcept : runnable(weft::detail::runnable_kind::callback) {}

  void run() override {
    ++runs;
    RL_ASSERT(runs == 1);  // run twice
    payload.with([](const int& v) { RL_ASSERT(v == published); });
  }
  void discard() noexcept override { ++discards; }

  weft::sync::cell<int> payload{0};
  int runs = 0;
  int discards = 0;
};

// The pool's idle machinery for `Workers` workers, with pool_core's calls around it.
template <std::size_t Workers>
struct pool {
  pool_idle idle{Workers};
  pool_injector injector;
  weft::platform::parker parkers[Workers];
  weft::sync::atomic<bool> exit{false};
  int announces[Workers] = {};  // how often each worker listed itself
  int wakes[Workers] = {};      // how often wake_one() returned it
  int stop_after = 0;           // > 0: whoever runs the stop_after-th item stops the pool
  std::size_t take_max = batch_max;  // the most items one pop_batch takes
  weft::sync::atomic<int> finished{0};

  // pool_core::push_injector: publish the item, then wake one parked worker.
  void submit(item& it) {
    it.payload.with_mut([](int& v) { v = published; });
    injector.push(&it);
    wake_one();
  }

  // pool_core's spill of a full local queue (push_local's overflow): the items go to the injector
  // in one batch, then one parked worker is woken.
  void spill(item& it) {
    it.payload.with_mut([](int& v) { v = published; });
    runnable* batch[1] = {&it};
    injector.push_batch(batch, 1);
    wake_one();
  }

  // pool_core::wake_one.
  void wake_one() {
    const std::size_t index = idle.wake_one();
    if (index == pool_idle::none) return;
    RL_ASSERT(index < Workers);
    ++wakes[index];
    RL_ASSERT(wakes[index] <= announces[index]);  // returned twice for one announce()
    parkers[index].unpark();
  }

  // pool_core::stop_workers.
  void stop() {
    // release: pairs with the workers' acquire loads of `exit`.
    exit.store(true, std::memory_order_release);
    idle.wake_all();
    for (auto& p : parkers) p.unpark();
  }

  void run(runnable& r) {
    r.run();
    // relaxed: a count only; stop() orders what the other workers see.
    if (stop_after > 0 && finished.fetch_add(1, std::memory_order_relaxed) + 1 == stop_after) stop();
  }

  // pool_core::worker_main and park(): runs items until the pool stops, or (`quota` > 0) until
  // this worker ran `quota` of them.
  void work(std::size_t index, int quota) {
    int ran = 0;
    bool searching = false;  // counted as searching by pool_idle (woken by a waker, now running)
    for (;;) {
      runnable* batch[batch_max] = {};
      const std::size_t n = injector.pop_batch(batch, take_max);
      // The last searcher to find work hands the search on (pool_core::worker_main).
      if (n != 0 && std::exchange(searching, false) && idle.end_search()) wake_one();
      for (std::size_t k = 0; k < n; ++k) run(*batch[k]);
      ran += static_cast<int>(n);
      if (quota > 0 && ran == quota) return;
      if (n != 0) continue;
      // acquire: pairs with the release store in stop().
      if (exit.load(std::memory_order_acquire)) return;
      ++announces[index];
      // acquire on `exit`: as above.
      if (idle.prepare_park(index, searching,
                            [&] { return injector.size() != 0 || exit.load(std::memory_order_acquire); })) {
        parkers[index].park();
        searching = idle.woken(index);
      }
    }
  }

  // After every thread ended (a stop may leave items queued: they are discarded, as at a stop).
  template <std::size_t N>
  void check_items(item (&items)[N]) {
    weft::detail::runnable_queue rest = injector.take_all();
    rest.discard_all();
    for (const item& it : items) RL_ASSERT(it.runs + it.discards == 1);  // 0: lost
  }
};

// One worker that runs `Items` items and leaves; one submitter.
template <class Scenario, int Items>
struct one_worker : rl::test_suite<Scenario, 2> {
  pool<1> p;
  item items[Items];

  void thread(unsigned index) {
    if (index == 0) {
      p.work(0, Items);
    } else {
      for (item& it : items) p.submit(it);
    }
  }

  void after() {
    for (const item& it : items) RL_ASSERT(it.runs == 1);
    p.check_items(items);
  }
};

struct one_item : one_worker<one_item, 1> {};
struct two_items : one_worker<two_items, 2> {};

// Two workers, one submitter of two items. Whoever runs the last item stops the pool (its
// workers wait for work until then): a lost wake-up strands an item with both workers parked.
struct two_workers : rl::test_suite<two_workers, 3> {
  static constexpr int total = 2;
  pool<2> p;
  item items[total];

  void before() { p.stop_after = total; }

  void thread(unsigned index) {
    if (index < 2) {
      p.work(index, 0);
    } else {
      for (item& it : items) p.submit(it);
    }
  }

  void after() {
    for (const item& it : items) RL_ASSERT(it.runs == 1);
    p.check_items(items);
  }
};

// Two workers, one submitter of two items, one item per take. Worker 0 leaves after its first item
// (a worker kept busy by it from then on). When worker 0 was woken for the first item, the second
// submission skips its wake (worker 0 is searching): worker 0, the last searcher, must wake
// worker 1 when it finds its item, or the second item waits with worker 1 parked forever.
struct search_hands_off : rl::test_suite<search_hands_off, 3> {
  static constexpr int total = 2;
  pool<2> p;
  item items[total];

  void before() {
    p.stop_after = total;
    p.take_max = 1;
  }

  void thread(unsigned index) {
    if (index < 2) {
      p.work(index, index == 0 ? 1 : 0);
    } else {
      for (item& it : items) p.submit(it);
    }
  }

  void after() {
    for (const item& it : items) RL_ASSERT(it.runs == 1);
    p.check_items(items);
  }
};

// A worker spills an item it cannot keep (its local queue is full) and stays busy from then on;
// the other worker, with nothing to do, parks. The spill's count and the worker's announce form
// the same store-load pair as a submission's: a lost wake-up leaves the item with the only free
// worker parked for ever (DEADLOCK).
struct spill_wakes_a_parked_worker : rl::test_suite<spill_wakes_a_parked_worker, 2> {
  pool<2> p;
  item items[1];

  void before() { p.stop_after = 1; }

  void thread(unsigned index) {
    if (index == 0) {
      p.work(0, 0);
    } else {
      p.spill(items[0]);
    }
  }

  void after() {
    RL_ASSERT(items[0].runs == 1);
    p.check_items(items);
  }
};

// Two workers with nothing to do park; a third thread submits one item and stops the pool at
// once, racing their announce/re-check/park. Every worker must leave; the item is run or
// discarded, once.
struct stop_while_parking : rl::test_suite<stop_while_parking, 3> {
  pool<2> p;
  item items[1];

  void thread(unsigned index) {
    if (index < 2) {
      p.work(index, 0);
    } else {
      p.submit(items[0]);
      p.stop();
    }
  }

  void after() { p.check_items(items); }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "pool_idle", argc, argv,
      {
          {"one_item", &run_test<one_item>, {search::context_bound(3), search::random(100000)}},
          {"two_items", &run_test<two_items>, {search::context_bound(3), search::random(100000)}},
          // Before the long searches below: its twin (pool_injector_batch_relaxed) fails only here.
          {"spill_wakes_a_parked_worker", &run_test<spill_wakes_a_parked_worker>,
           {search::context_bound(3), search::random(100000)}},
          // Two workers and a submitter give bound 3 tens of millions of schedules (minutes): bound
          // 2 in full, then a wide random sample.
          {"two_workers", &run_test<two_workers>, {search::context_bound(2), search::random(1000000)}},
          {"search_hands_off", &run_test<search_hands_off>, {search::context_bound(2), search::random(1000000)}},
          {"stop_while_parking", &run_test<stop_while_parking>,
           {search::context_bound(2), search::random(100000)}},
      });
}
