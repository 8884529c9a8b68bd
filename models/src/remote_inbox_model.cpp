// remote_inbox_model.cpp — Relacy model of weft::detail::remote_inbox (detail/remote_inbox.hpp),
// the production header compiled against the model flavor of the seam, with its capacity shrunk
// from 65,536 to 2 so that the bound is reached.
//
// Invariants:
//   * the bound: a drained batch never holds more than `capacity` user items, and pushes into an
//     inbox with room are accepted (so `full` is only answered when the inbox really is full);
//   * the bypass: internal pushes are accepted whatever the user count, open or closed, until the
//     loop kills the inbox;
//   * the close commit: once try_close() succeeded, user pushes answer `closed`, and no user item
//     that was answered `accepted` is left in the inbox (kill() hands back no user item): every
//     accepted item is drained by the owner, none is stranded;
//   * the user queue itself is only touched under the lock (it is a sync::cell: Relacy reports a
//     DATA RACE otherwise);
//   * the wake stack publishes: what a waker wrote before push_internal() (each wake's payload,
//     a sync::cell) is visible to the owner that drains it, through the push's release CAS and
//     the drain's acquire exchange (Relacy reports a DATA RACE otherwise);
//   * once killed, the wake stack refuses every push;
//   * only a push into an empty queue of its kind asks its caller to notify the owner, and no
//     item is left unseen for it: the drain that takes the items queued ahead takes it too.
// The `pending_` counter is a hint only (the lock orders the user queue), so its memory orders
// are not what this model checks; see docs/models.md.
#include <cstddef>

#include <weft/detail/remote_inbox.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/parker.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::detail::remote_inbox;
using weft::detail::runnable;
using weft::detail::runnable_kind;
using weft::detail::runnable_queue;
using push_result = remote_inbox::push_result;

constexpr std::size_t capacity = 2;  // production: 65,536

// A queue entry the model owns (statically, in the test): running or discarding it does nothing.
// A wake's pusher sets `payload` to `published` first; the owner checks it when it drains one.
constexpr int published = 1;
struct item final : runnable {
  explicit item(runnable_kind kind) noexcept : runnable(kind) {}
  void run() override {}
  void discard() noexcept override {}
  weft::sync::cell<int> payload{0};
};

// Pushes for the scenarios that do not model the owner's notification (notify_first_push does).
push_result push_user(remote_inbox& inbox, runnable* it) {
  bool wake_owner = false;
  return inbox.push_user(it, &wake_owner);
}
bool push_internal(remote_inbox& inbox, runnable* it) {
  bool wake_owner = false;
  return inbox.push_internal(it, &wake_owner);
}

// Producer side of an internal wake: write the payload, then push.
bool publish_and_push(remote_inbox& inbox, item& wake) {
  wake.payload.with_mut([](int& v) { v = published; });
  return push_internal(inbox, &wake);
}

struct batch_counts {
  std::size_t user = 0;
  std::size_t internal = 0;
};

// Owner side: takes every item out of `q`, counting the kinds.
batch_counts take_all(runnable_queue& q) {
  batch_counts counts;
  while (runnable* r = q.pop_front()) {
    if (r->kind() == runnable_kind::callback) {
      ++counts.user;
    } else {
      ++counts.internal;
      static_cast<item*>(r)->payload.with([](const int& v) { RL_ASSERT(v == published); });
    }
  }
  return counts;
}

// Three threads: two producers push three user items and two internal wakes into a 2-slot inbox
// while the owner drains; then the owner drains the rest and checks that an empty inbox has room
// for `capacity` user items again.
struct bound_and_bypass : rl::test_suite<bound_and_bypass, 3> {
  remote_inbox inbox{capacity};
  item a1{runnable_kind::callback}, a2{runnable_kind::callback}, b1{runnable_kind::callback};
  item w1{runnable_kind::task_poll}, w2{runnable_kind::task_poll};
  item c1{runnable_kind::callback}, c2{runnable_kind::callback};
  weft::sync::atomic<int> producers_done{0};
  weft::sync::atomic<int> user_accepted{0};

  void count(push_result r) {
    RL_ASSERT(r != push_result::closed);  // nobody closes in this scenario
    // relaxed: the owner reads the total after producers_done's acquire.
    if (r == push_result::accepted) user_accepted.fetch_add(1, std::memory_order_relaxed);
  }

  void thread(unsigned index) {
    if (index == 1) {
      count(push_user(inbox, &a1));
      count(push_user(inbox, &a2));
      RL_ASSERT(publish_and_push(inbox, w1));
      producers_done.fetch_add(1, std::memory_order_release);  // pairs with the owner's acquire
    } else if (index == 2) {
      count(push_user(inbox, &b1));
      RL_ASSERT(publish_and_push(inbox, w2));
      producers_done.fetch_add(1, std::memory_order_release);
    } else {
      runnable_queue q;
      inbox.drain_into(q);  // races the producers
      batch_counts seen = take_all(q);
      RL_ASSERT(seen.user <= capacity);
      while (producers_done.load(std::memory_order_acquire) != 2) weft::platform::yield_thread();
      inbox.drain_into(q);
      const batch_counts rest = take_all(q);
      RL_ASSERT(rest.user <= capacity);
      seen.user += rest.user;
      seen.internal += rest.internal;
      // The bypass: both internal wakes got in. The bound: at least `capacity` of the three user
      // pushes were accepted (the first two found room), and each accepted one was drained.
      RL_ASSERT(seen.internal == 2);
      const auto accepted = static_cast<std::size_t>(user_accepted.load(std::memory_order_relaxed));
      RL_ASSERT(accepted >= capacity);
      RL_ASSERT(seen.user == accepted);
      // Drained empty: there is room for `capacity` user items again.
      RL_ASSERT(push_user(inbox, &c1) == push_result::accepted);
      RL_ASSERT(push_user(inbox, &c2) == push_result::accepted);
      runnable_queue left = inbox.kill();
      RL_ASSERT(take_all(left).user == capacity);
    }
  }
};

// Three threads: the owner closes its inbox (the close commit of a loop that ran out of work)
// while a producer pushes user work and a waker pushes an internal wake.
struct close_commit : rl::test_suite<close_commit, 3> {
  remote_inbox inbox{capacity};
  item a1{runnable_kind::callback}, a2{runnable_kind::callback};
  item w1{runnable_kind::task_poll};
  weft::sync::atomic<int> others_done{0};
  weft::sync::atomic<int> user_accepted{0};
  weft::sync::atomic<bool> closed_answered{false};

  void push(item& it) {
    const push_result r = push_user(inbox, &it);
    RL_ASSERT(r != push_result::full);  // two items, two slots
    // relaxed: read by the owner after others_done's acquire.
    if (r == push_result::accepted) user_accepted.fetch_add(1, std::memory_order_relaxed);
    if (r == push_result::closed) closed_answered.store(true, std::memory_order_relaxed);
  }

  void thread(unsigned index) {
    if (index == 1) {
      push(a1);
      push(a2);
      others_done.fetch_add(1, std::memory_order_release);  // pairs with the owner's acquire
    } else if (index == 2) {
      RL_ASSERT(publish_and_push(inbox, w1));  // closed does not refuse internal wakes
      others_done.fetch_add(1, std::memory_order_release);
    } else {
      // The loop's shutdown: drain, and commit the close only if nothing arrived meanwhile.
      std::size_t user_run = 0;
      for (;;) {
        runnable_queue q;
        inbox.drain_into(q);
        user_run += take_all(q).user;
        if (inbox.try_close()) break;
        weft::platform::yield_thread();
      }
      RL_ASSERT(inbox.is_closed());
      while (others_done.load(std::memory_order_acquire) != 2) weft::platform::yield_thread();
      // Loop destruction: whatever is still queued is handed back. Internal wakes may be there
      // (their targets are disposed of by the loop); an accepted user item must not be.
      runnable_queue left = inbox.kill();
      const batch_counts stranded = take_all(left);
      RL_ASSERT(stranded.user == 0);
      RL_ASSERT(user_run == static_cast<std::size_t>(user_accepted.load(std::memory_order_relaxed)));
      // Every push not accepted was answered `closed` (full is impossible here).
      if (user_run < 2) RL_ASSERT(closed_answered.load(std::memory_order_relaxed));
      RL_ASSERT(!push_internal(inbox, &w1));  // dead now: refused (w1 is not queued twice)
    }
  }
};

// Three threads: two producers each push one item of `kind` (user items, or wakes) and notify
// the owner only when the push says they must; the owner (its driver's token is a parker here)
// drains, and parks until it has seen both. A push told that an item queued ahead carries the
// notification must still be drained: otherwise the owner parks for good with an item nobody
// will tell it about, and Relacy reports DEADLOCK.
template <runnable_kind kind>
struct notify_first_push : rl::test_suite<notify_first_push<kind>, 3> {
  remote_inbox inbox{capacity};
  weft::platform::parker owner;
  item first{kind}, second{kind};

  void produce(item& it) {
    bool wake_owner = false;
    if constexpr (kind == runnable_kind::task_poll) {
      it.payload.with_mut([](int& v) { v = published; });  // a wake carries one (take_all checks)
      RL_ASSERT(inbox.push_internal(&it, &wake_owner));
    } else {
      RL_ASSERT(inbox.push_user(&it, &wake_owner) == push_result::accepted);
    }
    if (wake_owner) owner.unpark();
  }

  void thread(unsigned index) {
    if (index == 0) {
      std::size_t seen = 0;
      for (;;) {
        runnable_queue q;
        inbox.drain_into(q);
        const batch_counts got = take_all(q);
        seen += got.user + got.internal;
        if (seen == 2) break;
        owner.park();
      }
      runnable_queue left = inbox.kill();
      RL_ASSERT(left.empty());
    } else {
      produce(index == 1 ? first : second);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "remote_inbox", argc, argv,
      {
          {"bound_and_bypass", &run_test<bound_and_bypass>, {search::context_bound(3), search::random(100000)}},
          {"close_commit", &run_test<close_commit>, {search::context_bound(3), search::random(100000)}},
          {"notify_first_push_user", &run_test<notify_first_push<runnable_kind::callback>>,
           {search::context_bound(3), search::random(100000)}},
          {"notify_first_push_wakes", &run_test<notify_first_push<runnable_kind::task_poll>>,
           {search::context_bound(3), search::random(100000)}},
      });
}
