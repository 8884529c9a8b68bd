// work_deque_model.cpp — Relacy model of weft::detail::work_deque (detail/work_deque.hpp), the
// production header compiled against the model flavor of the seam, with its capacity shrunk from
// 256 to 4 so that the full ring, pop_half and the reuse of slots are reached.
//
// Invariants:
//   * every item pushed is taken exactly once — by the owner's pop/pop_half, or by one thief's
//     steal (returned, or moved into the thief's ring and popped or stolen from there); a second
//     take fails the take's assertion, a lost item the check in after();
//   * a taker sees what was written to the item before its push: the payload is a sync::cell the
//     pusher writes, so a missing release/acquire between push and take is a DATA RACE;
//   * the owner never overwrites a slot whose old item a thief then takes (the wrap-around
//     scenario reuses every slot while a thief holds a stale head);
//   * a push into a full ring fails, and pop_half then takes the oldest ceil(n/2).
#include <cstddef>
#include <cstdint>

#include <weft/detail/work_deque.hpp>
#include <weft/models/harness.hpp>

namespace {

constexpr std::uint32_t capacity = 4;  // production: 256
constexpr int published = 1;

// An item of the model. `taken` is a plain int: Relacy runs every thread on one OS thread, and it
// is only a count for the assertions, not part of the protocol under test.
struct job {
  weft::sync::cell<int> payload{0};
  int taken = 0;
};

using deque = weft::detail::work_deque<job, capacity>;

// Owner: writes the item's payload, then pushes it.
bool publish_and_push(deque& q, job& j) {
  j.payload.with_mut([](int& v) { v = published; });
  return q.push(&j);
}

// Any taker: counts the take and reads the payload written before the push.
void take(job* j) {
  RL_ASSERT(j != nullptr);
  ++j->taken;
  RL_ASSERT(j->taken == 1);  // taken twice
  j->payload.with([](const int& v) { RL_ASSERT(v == published); });
}

// Pops the ring's owner can reach until it is empty.
void drain(deque& q) {
  while (job* j = q.pop()) take(j);
}

// A thief: steals from `victim` into its own ring, takes the returned item, then drains its ring.
void steal_and_drain(deque& victim, deque& mine) {
  if (job* j = victim.steal_half_into(mine)) take(j);
  drain(mine);
}

template <std::size_t N>
void check_each_taken_once(const job (&jobs)[N]) {
  for (const job& j : jobs) RL_ASSERT(j.taken == 1);  // 0: lost
}

// Two threads: the scenario's owner() on the owner's ring, and a thief that steals `Steals`
// times into its own ring, popping what it moved there after each steal.
template <class Scenario, std::size_t Jobs, int Steals>
struct owner_vs_thief : rl::test_suite<Scenario, 2> {
  deque owner_ring;
  deque thief_ring;
  job jobs[Jobs];

  void thread(unsigned index) {
    if (index == 0) {
      static_cast<Scenario*>(this)->owner();
    } else {
      for (int i = 0; i < Steals; ++i) steal_and_drain(owner_ring, thief_ring);
    }
  }

  void after() { check_each_taken_once(jobs); }
};

// The owner pushes three items, pops one, pushes a fourth and pops the rest; the thief steals once.
struct steal_vs_pop : owner_vs_thief<steal_vs_pop, 4, 1> {
  void owner() {
    for (int i = 0; i < 3; ++i) RL_ASSERT(publish_and_push(owner_ring, jobs[i]));
    if (job* j = owner_ring.pop()) take(j);
    RL_ASSERT(publish_and_push(owner_ring, jobs[3]));  // at most 3 queued before: room
    drain(owner_ring);
  }
};

// Three threads: the owner fills its ring and pops; one thief steals from it; the other steals
// from that thief's ring (a second hand-off: the payload must still be published) and then from
// the owner.
struct two_thieves : rl::test_suite<two_thieves, 3> {
  deque owner_ring;
  deque rings[2];
  job jobs[4];

  void thread(unsigned index) {
    if (index == 0) {
      for (job& j : jobs) RL_ASSERT(publish_and_push(owner_ring, j));
      drain(owner_ring);
    } else if (index == 1) {
      steal_and_drain(owner_ring, rings[0]);
    } else {
      steal_and_drain(rings[0], rings[1]);
      steal_and_drain(owner_ring, rings[1]);
    }
  }

  void after() { check_each_taken_once(jobs); }
};

// The owner fills its ring; its fifth push fails unless the thief made room first, and then
// pop_half spills the oldest half (as the pool spills to its shared queue) and the push is
// retried; the owner pops the rest. The thief steals once.
struct overflow_then_pop_half : owner_vs_thief<overflow_then_pop_half, capacity + 1, 1> {
  void owner() {
    for (std::uint32_t i = 0; i < capacity; ++i) RL_ASSERT(publish_and_push(owner_ring, jobs[i]));
    if (!publish_and_push(owner_ring, jobs[capacity])) {
      job* spilled[deque::pop_half_out_min] = {};
      const std::size_t k = owner_ring.pop_half(spilled, deque::pop_half_out_min);
      // Full at the failed push: a racing steal takes ceil(4/2) = 2, so 1 or 2 remain for us.
      RL_ASSERT(k >= 1);
      RL_ASSERT(k <= capacity / 2);
      for (std::size_t i = 0; i < k; ++i) take(spilled[i]);
      RL_ASSERT(owner_ring.push(&jobs[capacity]));
    }
    drain(owner_ring);
  }
};

// The owner pushes seven items through its 4-slot ring, popping in between, so every slot is
// reused while the thief, which steals twice, may hold a stale head and stale slot contents: its
// CAS must fail then, and its successful steals take live items only.
struct wrap_around : owner_vs_thief<wrap_around, 7, 2> {
  void owner() {
    for (int i = 0; i < 4; ++i) RL_ASSERT(publish_and_push(owner_ring, jobs[i]));
    for (int i = 0; i < 2; ++i) {
      if (job* j = owner_ring.pop()) take(j);
    }
    // At most 2 items left after two pops (a steal may have taken some too): room for 2.
    RL_ASSERT(publish_and_push(owner_ring, jobs[4]));
    RL_ASSERT(publish_and_push(owner_ring, jobs[5]));
    if (job* j = owner_ring.pop()) take(j);
    RL_ASSERT(publish_and_push(owner_ring, jobs[6]));
    drain(owner_ring);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "work_deque", argc, argv,
      {
          {"steal_vs_pop", &run_test<steal_vs_pop>, {search::context_bound(3), search::random(100000)}},
          {"two_thieves", &run_test<two_thieves>, {search::context_bound(2), search::random(100000)}},
          {"overflow_then_pop_half", &run_test<overflow_then_pop_half>,
           {search::context_bound(3), search::random(100000)}},
          {"wrap_around", &run_test<wrap_around>, {search::context_bound(3), search::random(100000)}},
      });
}
