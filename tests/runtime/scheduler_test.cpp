// tests/runtime/scheduler_test.cpp — placing work: spawn, spawn_anywhere, spawn_everywhere,
// factories invoked on the destination, thread_aware relocation, rejected factories.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime_test_support.hpp"

using weft_test::thread_id;

namespace {

struct placement {
  std::size_t worker = 0;
  std::uint64_t thread = 0;
};

weft::task<placement> where_am_i() { co_return placement{weft_test::on_worker(), thread_id()}; }

// The seam thread id of every worker, by index.
std::vector<std::uint64_t> worker_threads(weft::runtime& rt) {
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < rt.worker_count(); ++i) {
    auto r = rt.worker_scheduler(i).spawn([] { return where_am_i(); }).join();
    EXPECT_TRUE(r);
    EXPECT_EQ(r->worker, i);
    ids.push_back(r->thread);
  }
  return ids;
}

// What a factory saw when it was invoked, and what its task saw when it ran.
struct factory_report {
  std::uint64_t factory_thread = 0;
  std::uint64_t body_thread = 0;
  std::size_t worker = 0;
};

// A plain (non-coroutine) factory: it records where it is invoked, then makes the task.
auto recording_factory() {
  return [] {
    const std::uint64_t invoked_on = thread_id();
    return [](std::uint64_t factory_thread) -> weft::task<factory_report> {
      co_return factory_report{factory_thread, thread_id(), weft_test::on_worker()};
    }(invoked_on);
  };
}

// ---- relocation instrument ----------------------------------------------------------------------

struct relocation_entry {
  weft::worker_id from;
  weft::worker_id to;
  std::uint64_t thread = 0;
  std::size_t worker = 0;  // the worker running the relocation
};

struct relocation_log {
  std::mutex lock;
  std::vector<relocation_entry> entries;
  void add(relocation_entry e) {
    std::lock_guard<std::mutex> hold(lock);
    entries.push_back(e);
  }
  std::vector<relocation_entry> snapshot() {
    std::lock_guard<std::mutex> hold(lock);
    return entries;
  }
};

// A thread-aware value: counts its own relocations and logs each one.
class tracked {
 public:
  explicit tracked(std::shared_ptr<relocation_log> log) : log_(std::move(log)) {}
  void relocate(weft::worker_id from, weft::worker_id to) {
    ++relocations_;
    log_->add(relocation_entry{from, to, thread_id(), weft_test::on_worker()});
  }
  int relocations() const { return relocations_; }

 private:
  std::shared_ptr<relocation_log> log_;
  int relocations_ = 0;
};
static_assert(weft::thread_aware<tracked>);

struct input_report {
  int relocations = 0;  // of the input, as the factory received it
  std::uint64_t thread = 0;
  std::size_t worker = 0;
};

// An input factory: runs on the destination with the (already relocated) input.
auto input_factory() {
  return [](tracked t) -> weft::task<input_report> {
    co_return input_report{t.relocations(), thread_id(), weft_test::on_worker()};
  };
}

}  // namespace

TEST(scheduler_placement, worker_scheduler_copied_to_other_threads_submits_to_its_worker) {
  auto rt = weft::runtime::builder().workers(3).build();
  const auto threads = worker_threads(rt);

  // Worker 1's own scheduler, taken from its builtins and carried out of the worker.
  auto taken = rt.worker_scheduler(1)
                   .spawn([]() -> weft::task<weft::scheduler> { co_return weft::builtins::current().scheduler(); })
                   .join();
  ASSERT_TRUE(taken);
  weft::scheduler sched = *taken;
  ASSERT_EQ(sched.worker(), std::optional<std::size_t>(1));

  // From a foreign thread.
  std::vector<placement> seen;
  std::thread foreign([&] {
    for (int i = 0; i < 20; ++i) {
      auto r = sched.spawn([] { return where_am_i(); }).join();
      if (r) seen.push_back(*r);
    }
  });
  foreign.join();
  ASSERT_EQ(seen.size(), 20u);
  for (const placement& p : seen) {
    EXPECT_EQ(p.worker, 1u);
    EXPECT_EQ(p.thread, threads[1]);
  }

  // From tasks on the other workers.
  for (std::size_t from : {0u, 2u}) {
    auto r = rt.worker_scheduler(from)
                 .spawn([sched]() mutable -> weft::task<placement> {
                   co_return (co_await sched.spawn([] { return where_am_i(); })).value();
                 })
                 .join();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->worker, 1u);
    EXPECT_EQ(r->thread, threads[1]);
  }

  // From a blocking callback.
  auto via_blocking = rt.worker_scheduler(0).spawn_blocking([sched]() mutable {
    return sched.spawn([] { return where_am_i(); }).join().value();
  });
  auto vb = via_blocking.join();
  ASSERT_TRUE(vb);
  EXPECT_EQ(vb->worker, 1u);
  EXPECT_EQ(vb->thread, threads[1]);
}

TEST(scheduler_placement, spawn_on_the_builtins_scheduler_lands_on_the_same_worker) {
  auto rt = weft::runtime::builder().workers(3).build();
  auto r = rt.worker_scheduler(2)
               .spawn([]() -> weft::task<bool> {
                 const std::uint64_t me = thread_id();
                 bool all_here = true;
                 for (int i = 0; i < 10; ++i) {
                   auto child = co_await weft::builtins::current().scheduler().spawn([] { return where_am_i(); });
                   all_here = all_here && child && child->worker == 2 && child->thread == me;
                 }
                 co_return all_here;
               })
               .join();
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
}

TEST(scheduler_placement, spawn_anywhere_spreads_over_the_workers) {
  auto rt = weft::runtime::builder().workers(4).build();
  // Each task keeps its worker busy for a while, so the burst finds every worker busy (or asleep)
  // after the first few picks and spreads round-robin; trivial tasks could all go to whichever
  // worker is back in its idle spin at each pick (worker_picker.hpp), as intended.
  auto busy_then_report = []() -> weft::task<placement> {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (std::chrono::steady_clock::now() < until) {
    }
    co_return co_await where_am_i();
  };
  std::vector<weft::join_handle<placement>> handles;
  for (int i = 0; i < 64; ++i) handles.push_back(rt.scheduler().spawn_anywhere(busy_then_report));
  std::vector<int> per_worker(rt.worker_count(), 0);
  for (auto& h : handles) {
    auto r = h.join();
    ASSERT_TRUE(r);
    ASSERT_LT(r->worker, per_worker.size());
    ++per_worker[r->worker];
  }
  // Round robin alone would give each 16; a few early picks go to idle workers instead.
  for (std::size_t w = 0; w < per_worker.size(); ++w) EXPECT_GE(per_worker[w], 2) << "worker " << w;
}

TEST(scheduler_placement, a_blocking_join_leaves_a_hint_that_the_next_placement_consumes) {
  auto rt = weft::runtime::builder().workers(2).build();
  weft::detail::last_joined_owner_slot::set(nullptr);
  auto h = rt.worker_scheduler(1).spawn(
      []() -> weft::task<weft::detail::task_owner*> { co_return weft::detail::current_task()->owner(); });
  auto ran_on = h.join();
  ASSERT_TRUE(ran_on);
  ASSERT_NE(*ran_on, nullptr);
  EXPECT_EQ(weft::detail::last_joined_owner_slot::get(), *ran_on);  // worker_picker.hpp, rule 1
  auto next = rt.scheduler().spawn_anywhere([]() -> weft::task<int> { co_return 1; });
  EXPECT_EQ(weft::detail::last_joined_owner_slot::get(), nullptr);  // one placement only
  EXPECT_EQ(next.join().value(), 1);
}

TEST(scheduler_placement, spawn_everywhere_reaches_every_worker_exactly_once) {
  auto rt = weft::runtime::builder().workers(4).build();
  const auto threads = worker_threads(rt);
  auto check = [&](std::vector<weft::join_handle<factory_report>> handles) {
    ASSERT_EQ(handles.size(), rt.worker_count());
    std::multiset<std::size_t> workers;
    for (std::size_t i = 0; i < handles.size(); ++i) {
      auto r = handles[i].join();
      ASSERT_TRUE(r);
      workers.insert(r->worker);
      EXPECT_EQ(r->worker, i);  // handles come in worker order
      EXPECT_EQ(r->factory_thread, threads[r->worker]);
      EXPECT_EQ(r->body_thread, threads[r->worker]);
    }
    for (std::size_t w = 0; w < rt.worker_count(); ++w) EXPECT_EQ(workers.count(w), 1u);
  };
  // From outside the runtime.
  check(rt.scheduler().spawn_everywhere(recording_factory()));
  // From a worker's own scheduler: still every worker, not just that one.
  auto inner = rt.worker_scheduler(2)
                   .spawn([]() -> weft::task<std::vector<weft::join_handle<factory_report>>> {
                     co_return weft::builtins::current().scheduler().spawn_everywhere(recording_factory());
                   })
                   .join();
  ASSERT_TRUE(inner);
  check(std::move(*inner));
}

TEST(scheduler_placement, factories_run_on_the_destination_thread) {
  auto rt = weft::runtime::builder().workers(3).build();
  const auto threads = worker_threads(rt);
  const std::uint64_t here = thread_id();
  std::vector<weft::join_handle<factory_report>> handles;
  for (int i = 0; i < 6; ++i) handles.push_back(rt.scheduler().spawn(recording_factory()));
  for (int i = 0; i < 6; ++i) handles.push_back(rt.scheduler().spawn_anywhere(recording_factory()));
  for (std::size_t w = 0; w < 3; ++w) handles.push_back(rt.worker_scheduler(w).spawn(recording_factory()));
  for (auto& h : handles) {
    auto r = h.join();
    ASSERT_TRUE(r);
    EXPECT_NE(r->factory_thread, here);
    EXPECT_EQ(r->factory_thread, threads[r->worker]);
    EXPECT_EQ(r->body_thread, threads[r->worker]);
  }
}

TEST(scheduler_placement, factory_state_is_created_on_the_destination_worker) {
  // A factory may create non-thread-safe state in place: here, a value whose constructor records
  // its thread. The factory is copied to each worker; each copy constructs its own.
  auto rt = weft::runtime::builder().workers(3).build();
  const auto threads = worker_threads(rt);
  struct local_state {
    std::uint64_t born_on = thread_id();
  };
  auto handles = rt.scheduler().spawn_everywhere([]() -> weft::task<std::uint64_t> {
    local_state s;  // created on the destination
    co_await weft::yield_now();
    co_return s.born_on;
  });
  for (std::size_t w = 0; w < handles.size(); ++w) {
    auto r = handles[w].join();
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, threads[w]);
  }
}

TEST(thread_aware_relocation, spawn_anywhere_relocates_once_on_the_destination_from_outside) {
  auto rt = weft::runtime::builder().workers(3).build();
  const auto threads = worker_threads(rt);
  auto log = std::make_shared<relocation_log>();
  std::vector<weft::join_handle<input_report>> handles;
  for (int i = 0; i < 9; ++i) handles.push_back(rt.scheduler().spawn_anywhere(tracked(log), input_factory()));
  std::vector<input_report> reports;
  for (auto& h : handles) {
    auto r = h.join();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->relocations, 1);  // relocated exactly once, before the factory ran
    EXPECT_EQ(r->thread, threads[r->worker]);
    reports.push_back(*r);
  }
  const auto entries = log->snapshot();
  ASSERT_EQ(entries.size(), 9u);  // one per explicit input, however often it was moved
  for (const auto& e : entries) {
    EXPECT_TRUE(e.from.is_external());
    EXPECT_EQ(e.from, weft::external_worker);
    EXPECT_EQ(e.to.index, e.worker);       // `to` names the worker that ran the relocation
    EXPECT_EQ(e.thread, threads[e.worker]);  // on that worker's thread
  }
}

TEST(thread_aware_relocation, spawn_anywhere_from_a_worker_names_it_as_from) {
  auto rt = weft::runtime::builder().workers(3).build();
  auto log = std::make_shared<relocation_log>();
  auto r = rt.worker_scheduler(1)
               .spawn([log]() -> weft::task<bool> {
                 bool ok = true;
                 for (int i = 0; i < 6; ++i) {
                   auto out = co_await weft::builtins::current().scheduler().spawn_anywhere(tracked(log), input_factory());
                   ok = ok && out && out->relocations == 1;
                 }
                 co_return ok;
               })
               .join();
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
  const auto entries = log->snapshot();
  ASSERT_EQ(entries.size(), 6u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.from, weft::worker_id{1});
    EXPECT_EQ(e.to.index, e.worker);
  }
}

TEST(thread_aware_relocation, spawn_everywhere_relocates_each_copy_once_on_its_worker) {
  auto rt = weft::runtime::builder().workers(4).build();
  const auto threads = worker_threads(rt);
  auto log = std::make_shared<relocation_log>();
  auto handles = rt.scheduler().spawn_everywhere(tracked(log), input_factory());
  ASSERT_EQ(handles.size(), 4u);
  for (std::size_t w = 0; w < handles.size(); ++w) {
    auto r = handles[w].join();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->worker, w);
    EXPECT_EQ(r->relocations, 1);
  }
  const auto entries = log->snapshot();
  ASSERT_EQ(entries.size(), 4u);
  std::set<std::size_t> destinations;
  for (const auto& e : entries) {
    EXPECT_EQ(e.from, weft::external_worker);
    EXPECT_EQ(e.to.index, e.worker);
    EXPECT_EQ(e.thread, threads[e.worker]);
    destinations.insert(e.to.index);
  }
  EXPECT_EQ(destinations.size(), 4u);

  // From worker 3: `from` is worker 3 for every copy, including the one that stays there.
  auto log2 = std::make_shared<relocation_log>();
  auto inner = rt.worker_scheduler(3)
                   .spawn([log2]() -> weft::task<int> {
                     auto hs = weft::builtins::current().scheduler().spawn_everywhere(tracked(log2), input_factory());
                     int ok = 0;
                     for (auto& h : hs) {
                       auto out = co_await h;
                       if (out && out->relocations == 1) ++ok;
                     }
                     co_return ok;
                   })
                   .join();
  ASSERT_TRUE(inner);
  EXPECT_EQ(*inner, 4);
  for (const auto& e : log2->snapshot()) EXPECT_EQ(e.from, weft::worker_id{3});
  EXPECT_EQ(log2->snapshot().size(), 4u);
}

TEST(thread_aware_relocation, spawn_block_on_and_join_do_not_relocate) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto log = std::make_shared<relocation_log>();
  // Captures of an ordinary spawn are not relocated.
  auto r = rt.scheduler().spawn([t = tracked(log)]() -> weft::task<int> { co_return t.relocations(); }).join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
  // Nor are block_on captures.
  EXPECT_EQ(rt.block_on([t = tracked(log)]() -> weft::task<int> { co_return t.relocations(); }), 0);
  // A result is not relocated on its way back: the input was relocated once, and stays so.
  auto back = rt.scheduler().spawn_anywhere(tracked(log), [](tracked t) -> weft::task<tracked> { co_return t; }).join();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->relocations(), 1);
  EXPECT_EQ(log->snapshot().size(), 1u);
}

TEST(thread_aware_relocation, arithmetic_and_thread_agnostic_inputs_need_no_hook) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto r = rt.scheduler().spawn_anywhere(20, [](int v) -> weft::task<int> { co_return v + 1; }).join();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 21);
  auto hs = rt.scheduler().spawn_everywhere(weft::thread_agnostic<std::vector<int>>({1, 2}),
                                            [](weft::thread_agnostic<std::vector<int>> v) -> weft::task<std::size_t> {
                                              co_return v->size();
                                            });
  for (auto& h : hs) EXPECT_EQ(h.join().value(), 2u);
}

TEST(scheduler_placement, rejected_factories_never_run) {
  auto rt = weft::runtime::builder().workers(2).build();
  auto any = rt.scheduler();
  auto one = rt.worker_scheduler(1);
  ASSERT_TRUE(std::move(rt).stop().is_complete());

  std::atomic<int> invoked{0};
  auto log = std::make_shared<relocation_log>();
  auto factory = [&invoked]() -> weft::task<int> {
    invoked.fetch_add(1);
    co_return 1;
  };
  auto plain_factory = [&invoked] {
    invoked.fetch_add(1);
    return where_am_i();
  };
  auto with_input = [&invoked](tracked) -> weft::task<int> {
    invoked.fetch_add(1);
    co_return 1;
  };
  auto expect_closed = [](auto handle) {
    ASSERT_TRUE(handle.is_finished());
    auto r = handle.join();
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_rejected());
    EXPECT_EQ(r.error().rejection_reason(), weft::queue_error::closed);
  };
  for (weft::scheduler* s : {&any, &one}) {
    expect_closed(s->spawn(factory));
    expect_closed(s->spawn(plain_factory));
    expect_closed(s->spawn_anywhere(factory));
    expect_closed(s->spawn_anywhere(tracked(log), with_input));
    for (auto& h : s->spawn_everywhere(factory)) expect_closed(std::move(h));
    for (auto& h : s->spawn_everywhere(tracked(log), with_input)) expect_closed(std::move(h));
    expect_closed(s->spawn_blocking([&invoked] { return invoked.fetch_add(1); }));
  }
  // An empty scheduler rejects too.
  weft::scheduler empty;
  expect_closed(empty.spawn(factory));
  EXPECT_EQ(invoked.load(), 0);
  EXPECT_TRUE(log->snapshot().empty());  // nothing was relocated either
}
