// handback_stack_model.cpp — Relacy model of weft::detail::handback_stack (detail/handback_stack.hpp),
// the production header compiled against the model flavor of the seam: how a stealing_pool's
// worker gets back the cells it adopted that completed on other workers.
//
// Invariants:
//   * every pushed item is taken exactly once, by the owner, whatever the interleaving of pushes
//     and takes (the owner keeps taking until it has them all; a lost or doubled item fails the
//     count in after(), or an item's assertion);
//   * the owner sees what a pusher wrote to an item before pushing it, and the item's link: the
//     payload is a sync::cell, so a missing release/acquire between push and take is a DATA RACE.
#include <cstddef>

#include <weft/detail/handback_stack.hpp>
#include <weft/detail/runnable.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::detail::handback_stack;
using weft::detail::runnable;

constexpr int published = 1;

// An item of the model. `taken` is a plain int: Relacy runs every thread on one OS thread, and it
// only feeds the assertions, not the protocol under test.
class item final : public runnable {
 public:
  item() noexcept : runnable(weft::detail::runnable_kind::task_poll) {}
  void run() override {}
  void discard() noexcept override {}

  weft::sync::cell<int> payload{0};
  int taken = 0;
};

// The owner takes until it has every item; `Pushers` threads push `PerPusher` items each, writing
// each item's payload first (as a completing worker finishes with a cell before handing it back).
template <class Scenario, int Pushers, int PerPusher>
struct handback : rl::test_suite<Scenario, Pushers + 1> {
  static constexpr int total = Pushers * PerPusher;
  handback_stack stack;
  item items[total];
  int received = 0;

  void thread(unsigned index) {
    if (index == 0) {
      while (received < total) {
        runnable* r = stack.take_all();
        if (r == nullptr) {
          weft::platform::yield_thread();
          continue;
        }
        while (r != nullptr) {
          auto* it = static_cast<item*>(r);
          r = r->next;
          it->payload.with([](const int& v) { RL_ASSERT(v == published); });
          ++it->taken;
          RL_ASSERT(it->taken == 1);  // taken twice
          ++received;
        }
      }
    } else {
      const int first = static_cast<int>(index - 1) * PerPusher;
      for (int k = first; k < first + PerPusher; ++k) {
        items[k].payload.with_mut([](int& v) { v = published; });
        stack.push(&items[k]);
      }
    }
  }

  void after() {
    for (const item& it : items) RL_ASSERT(it.taken == 1);
  }
};

struct one_pusher : handback<one_pusher, 1, 2> {};
struct two_pushers : handback<two_pushers, 2, 2> {};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "handback_stack", argc, argv,
      {
          {"one_pusher", &run_test<one_pusher>, {search::context_bound(3), search::random(100000)}},
          {"two_pushers", &run_test<two_pushers>, {search::context_bound(2), search::random(200000)}},
      });
}
