// pool_core.cpp — a stealing_pool's workers: where they find work, how they park, and how the
// pool stops (see pool_core.hpp for the queues, admission and lifetime).
#include <weft/detail/pool_core.hpp>

#include <bit>
#include <limits>
#include <string>
#include <system_error>

#include <weft/detail/coop_budget.hpp>
#include <weft/detail/delayed_notification.hpp>
#include <weft/detail/task_harness.hpp>
#include <weft/platform/fault.hpp>
#include <weft/runtime.hpp>

namespace weft::detail {

namespace {
struct pool_worker_tag;
using pool_worker_slot = platform::thread_slot<pool_worker, pool_worker_tag>;
}  // namespace

// --- pool_priority_owner ----------------------------------------------------------------------

void pool_priority_owner::schedule_task(task_header* task) noexcept { core_->schedule(priority_, task); }

bool pool_priority_owner::polls_here() const noexcept {
  pool_worker* w = pool_worker_slot::get();
  return w != nullptr && &w->pool == core_;
}

void pool_priority_owner::task_finished(task_header* task) noexcept { core_->task_finished(task); }

telemetry_sink& pool_priority_owner::telemetry() const noexcept { return core_->telemetry(); }

void pool_priority_owner::last_reference_dropped() noexcept { core_->core_ref_release(); }

thread_tallies* pool_priority_owner::tallies_of_this_thread() noexcept {
  pool_worker* w = pool_worker_slot::get();
  return w != nullptr && &w->pool == core_ ? &w->tallies[index_of(priority_)] : nullptr;
}

// --- pool_core: construction and lifetime -----------------------------------------------------

pool_core::pool_core(pool_config config) : config_(std::move(config)) {
  if (!config_.telemetry) config_.telemetry = noop_telemetry();
  for (std::size_t p = 0; p < priority_count; ++p) {
    owners_[p].bind(this, static_cast<priority>(p));
    owners_[p].counter = &tasks_;
    weight_total_ += config_.weights[p];
  }
  const std::size_t n = *config_.workers;  // set and checked by the builder
  idle_ = std::make_unique<pool_idle>(n);
  workers_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) workers_.push_back(std::make_unique<pool_worker>(*this, i));
}

pool_core::~pool_core() = default;

void pool_core::core_ref_release() noexcept {
  // acq_rel: the last releaser must see every other holder's writes before deleting.
  if (core_refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void pool_core::start() {
  std::size_t started = 0;
  std::optional<start_error> failure;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    pool_worker& w = *workers_[i];
    try {
      // A refused thread throws std::system_error (the sim flavor injects that refusal itself).
      w.thread = platform::thread([this, &w] { worker_main(w); });
      ++started;
    } catch (const std::system_error& e) {
      failure.emplace(i, e.what());
      break;
    }
  }
  if (failure) {
    close_admission();
    stop_workers();
    throw *failure;
  }
}

pool_worker* pool_core::current_worker() const noexcept {
  pool_worker* w = pool_worker_slot::get();
  return (w != nullptr && &w->pool == this) ? w : nullptr;
}

// --- spawning and scheduling ------------------------------------------------------------------

static_assert(pool_config::workers_max <= std::numeric_limits<std::uint16_t>::max(),
              "a cell's list_slot names the adopting worker");

bool pool_core::take_finish_credit(pool_worker& w) noexcept {
  for (thread_tallies& t : w.tallies) {
    if (t.take_finish()) return true;
  }
  return false;
}

std::uint32_t pool_core::next_task_id(pool_worker* here) noexcept {
  // Diagnostic ids, never 0 (0 means "no id" in traces): a worker numbers its own spawns, with
  // its index in the low bits so that two workers' ids differ; an outside thread's share a count.
  if (here != nullptr) {
    const std::uint32_t k = ++here->next_task_id;
    const auto n = static_cast<std::uint32_t>(workers_.size());
    return k * n + static_cast<std::uint32_t>(here->index) + 1;
  }
  // relaxed: only uniqueness (modulo wrapping) matters.
  return external_task_ids_.fetch_add(1, std::memory_order_relaxed) + 1;
}

void pool_core::count_spawn(pool_worker* here) noexcept {
  if (!config_.stats) return;
  if (here != nullptr) {
    here->counters.bump(here->counters.spawned_local);
  } else {
    // relaxed: a statistic.
    spawned_external_.fetch_add(1, std::memory_order_relaxed);
  }
}

void pool_core::admit(task_header* cell, pool_worker* here) noexcept {
  // The first poll: the cell was made `scheduled` with a queue reference (task_state.hpp). Until
  // that poll adopts it, a queue holds it, and a stop's cancellation reaches it at adoption.
  const std::size_t level = index_of(static_cast<const pool_priority_owner*>(cell->owner())->level());
  const unsigned bit = 1u << level;
  // relaxed: a hint (levels_in_use()); testing first keeps the line shared once the bit is set.
  if ((levels_used_.load(std::memory_order_relaxed) & bit) == 0) levels_used_.fetch_or(bit, std::memory_order_relaxed);
  if (here != nullptr) {
    push_lifo(*here, level, cell);
  } else {
    push_injector(level, cell);
  }
}

void pool_core::push_lifo(pool_worker& w, std::size_t level, runnable* r) noexcept {
  // The newest spawn runs next on this worker (its data is warm in this cache, and a tree of
  // spawns unfolds depth first instead of flooding the queue); the one it displaces goes to the
  // local queue, where others may steal it.
  if (runnable* displaced = std::exchange(w.lifo[level], r)) push_local(w, level, displaced);
}

void pool_core::adopt(pool_worker& w, task_header* cell) noexcept {
  cell->owned_prev = nullptr;
  cell->owned_next = w.owned_head;
  if (w.owned_head) w.owned_head->owned_prev = cell;
  w.owned_head = cell;
  cell->set_list_slot(static_cast<std::uint16_t>(w.index));
  cell->mark_adopted();
  if (w.list_closed) {
    // A stop swept this list before the task got here. relaxed: read by stop() after joining
    // this worker.
    cancelled_by_stop_.fetch_add(1, std::memory_order_relaxed);
    cell->request_cancel();  // still `scheduled`: the poll about to run completes it as cancelled
  }
}

void pool_core::unlink(pool_worker& w, task_header* cell) noexcept {
  if (cell->owned_prev) {
    cell->owned_prev->owned_next = cell->owned_next;
  } else {
    WEFT_ASSERT(w.owned_head == cell);
    w.owned_head = cell->owned_next;
  }
  if (cell->owned_next) cell->owned_next->owned_prev = cell->owned_prev;
  cell->owned_prev = cell->owned_next = nullptr;
}

void pool_core::task_finished(task_header* task) noexcept {
  pool_worker& home = *workers_[task->list_slot()];
  if (current_worker() == &home) {
    unlink(home, task);
    return;
  }
  // Adopted by another worker: only that one touches its list. The cell goes back to it with a
  // reference of its own, so it outlives the completion that releases the list's reference.
  task->ref_inc();
  home.finished_elsewhere.push(task);
}

void pool_core::drain_finished_elsewhere(pool_worker& w) noexcept {
  w.polls_since_drain = 0;
  runnable* r = w.finished_elsewhere.take_all();
  while (r != nullptr) {
    auto* cell = static_cast<task_header*>(r);
    r = r->next;
    unlink(w, cell);
    cell->release();  // the hand-back's reference (maybe the last)
  }
}

void pool_core::schedule(priority p, task_header* task) noexcept {
  const std::size_t level = index_of(p);
  if (pool_worker* w = current_worker()) {
    push_local(*w, level, task);
  } else {
    // The task may carry the last reference to the pool (a wake by value): once pushed, a worker
    // can run and free it and the pool's stop can end before push_injector's wake_one(). The
    // owner's reference, taken while the task still keeps one, holds the core across both.
    task_owner& mine = owner(p);
    mine.ref_inc();
    push_injector(level, task);
    mine.release();
  }
}

void pool_core::push_local(pool_worker& w, std::size_t level, runnable* r) noexcept {
  runnable_ring& overflow = w.overflow[level];
  auto* cell = static_cast<task_header*>(r);
  if (!overflow.empty() || !w.local[level].push(r, cell->awaited_leaf())) {
    if (!cell->adopted() && w.local[level].size_approx() == work_deque_capacity) {
      // A new task with the local queue full: it and the older half of the queue go to the
      // injector, where any worker can take them. They have not run here yet, or have long
      // waited, so moving them costs no warm cache, and a burst of spawns spreads over the workers.
      std::array<runnable*, work_deque<runnable>::pop_half_out_min + 1> batch{};
      std::size_t n = w.local[level].pop_half(batch.data(), batch.size() - 1);
      batch[n++] = r;
      injectors_[level].push_batch(batch.data(), n);
      wake_one();
      return;
    }
    // A task that ran here (a yield, a wake) behind a full queue, or behind tasks already waiting
    // in the overflow: the overflow keeps it on this worker, where its cell and frame are warm.
    overflow.push_back(r);
    // relaxed: a statistic; only this thread writes it.
    w.overflow_size[level].store(overflow.size(), std::memory_order_relaxed);
    if (top_up_local(w, level)) return;  // refill_local() woke a worker if one is wanted
  }
  // A parked worker could steal this; waking one costs the pusher a lock, so only when one is
  // parked and none is searching already (a stale answer costs parallelism, never progress: the
  // pusher itself runs the work).
  if (idle_->wake_wanted_approx()) wake_one();
}

bool pool_core::refill_local(pool_worker& w, std::size_t level) noexcept {
  runnable_ring& overflow = w.overflow[level];
  if (overflow.empty()) return false;
  work_deque<runnable>& queue = w.local[level];
  // Only thieves change the queue meanwhile, and they only take: the room can only grow.
  const std::size_t room = work_deque_capacity - queue.size_approx();
  for (std::size_t i = 0; i < room; ++i) {
    runnable* r = overflow.pop_front();
    if (r == nullptr) break;
    // No first-touch hint: reading it would take a miss on a cell that is cold here, per move.
    [[maybe_unused]] const bool pushed = queue.push(r);
    WEFT_ASSERT(pushed);
  }
  // relaxed: as in push_local().
  w.overflow_size[level].store(overflow.size(), std::memory_order_relaxed);
  if (idle_->wake_wanted_approx()) wake_one();
  return true;
}

bool pool_core::top_up_local(pool_worker& w, std::size_t level) noexcept {
  // A thief always finds some of this worker's backlog in its local queue.
  return !w.overflow[level].empty() && w.local[level].size_approx() < pool_local_refill_below &&
         refill_local(w, level);
}

void pool_core::push_injector(std::size_t level, runnable* r) noexcept {
  injectors_[level].push(r);
  maybe_delay_notification();
  wake_one();
}

void pool_core::wake_one() noexcept {
  const std::size_t index = idle_->wake_one();
  if (index == pool_idle::none) return;
  if (config_.stats) {
    // relaxed: a statistic.
    wake_notifications_.fetch_add(1, std::memory_order_relaxed);
  }
  workers_[index]->parker.unpark();
}

// --- the worker loop --------------------------------------------------------------------------

void pool_core::worker_main(pool_worker& w) noexcept {
  pool_worker_slot::set(&w);
  poll_domain_slot::set(this);
  coop_budget_slot::set(&w.budget);
  w.next_victim = w.index + 1 == workers_.size() ? 0 : w.index + 1;
  for (;;) {
    // relaxed: the flag carries no data, and a worker parked when it was set sees it after the
    // unpark in cancel_all(), whose token orders the two.
    if (!w.list_closed && cancel_requested_.load(std::memory_order_relaxed)) [[unlikely]] {
      sweep_for_stop(w);
    }
    if (runnable* r = find_work(w)) {
      // The last searcher to find work passes the search on: what it leaves behind (a burst of
      // submissions it skipped the wakes for) gets the next parked worker (pool_idle.hpp).
      if (std::exchange(w.searching, false) && idle_->end_search()) wake_one();
      run(w, r);
      continue;
    }
    // Out of work: the tasks that finished here count as finished before this worker spins or
    // parks (a drain waits for that).
    report_finishes(w);
    drain_finished_elsewhere(w);
    // acquire: pairs with the release store in stop_workers(); everything queued before it was
    // run or is discarded there.
    if (exit_.load(std::memory_order_acquire)) break;
    park(w);
  }
  report_finishes(w);
  // Every task completed before the stop let workers exit, and every hand-back of one happened
  // before its count reached the stopper; so this empties the list.
  drain_finished_elsewhere(w);
  WEFT_ASSERT(w.owned_head == nullptr);
  coop_budget_slot::set(nullptr);
  poll_domain_slot::set(nullptr);
  pool_worker_slot::set(nullptr);
  // The stashed owner references go back before the pool may let go of its owners (it does after
  // joining this thread); frees on this thread from now on count directly.
  for (std::size_t p = 0; p < priority_count; ++p) {
    if (const std::size_t n = std::exchange(w.tallies[p].reference_stash, 0)) owners_[p].release_references(n);
  }
}

void pool_core::report_finishes(pool_worker& w) noexcept {
  std::size_t n = 0;
  for (thread_tallies& t : w.tallies) n += std::exchange(t.unreported_finishes, 0);
  if (n != 0) tasks_.finished_many(n);
}

void pool_core::run(pool_worker& w, runnable* r) noexcept {
  if (config_.stats) w.counters.bump(w.counters.polls);
  // The pool's queues hold task cells only.
  auto* cell = static_cast<task_header*>(r);
  if (!cell->adopted()) adopt(w, cell);
  w.budget = coop_budget_per_poll;
  cell->run();
  if (++w.polls_since_drain == pool_handback_drain_interval) drain_finished_elsewhere(w);
}

// Smooth weighted round robin: each pick adds every level's weight to its credit and takes the
// level with the most, which then pays the total. Over weight_total_ picks each level is chosen
// exactly its weight times, interleaved rather than in runs.
std::size_t pool_core::pick_level(pool_worker& w) noexcept {
  std::size_t best = 0;
  for (std::size_t p = 0; p < priority_count; ++p) {
    w.selector_credit[p] += config_.weights[p];
    if (w.selector_credit[p] > w.selector_credit[best]) best = p;
  }
  w.selector_credit[best] -= weight_total_;
  return best;
}

runnable* pool_core::find_work(pool_worker& w) noexcept {
  const unsigned used = levels_in_use();
  // With one level in use there is nothing to weigh.
  const std::size_t chosen =
      std::has_single_bit(used) ? static_cast<std::size_t>(std::countr_zero(used)) : pick_level(w);
  if ((used >> chosen) & 1u) {
    if (runnable* r = take_at(w, chosen)) return r;
  }
  // The chosen level has nothing: any other level's work is better than idling.
  for (std::size_t p = 0; p < priority_count; ++p) {
    if (p == chosen || ((used >> p) & 1u) == 0) continue;
    if (runnable* r = take_at(w, p)) return r;
  }
  // Before going idle, the levels passed over too: a bit this thread has not seen set yet must
  // not leave a task queued while its worker parks.
  for (std::size_t p = 0; p < priority_count; ++p) {
    if ((used >> p) & 1u) continue;
    if (runnable* r = take_at(w, p)) return r;
  }
  return nullptr;
}

runnable* pool_core::take_at(pool_worker& w, std::size_t level) noexcept {
  std::uint32_t& burst = w.burst[level];
  if (burst >= config_.local_burst) {
    // A long run of local work (say a task that keeps waking itself) must not keep external
    // submissions of its level waiting: look at that level's injector first this time.
    burst = 0;
    if (runnable* r = take_from_injector(w, level)) return r;
  }
  if (runnable* r = std::exchange(w.lifo[level], nullptr)) {
    if (w.lifo_streak < pool_lifo_streak_max) {
      ++w.lifo_streak;
      ++burst;
      return r;
    }
    // Spawns that each spawn the next would otherwise keep the queue waiting: this one goes
    // behind what is queued.
    push_local(w, level, r);
  }
  w.lifo_streak = 0;
  if (runnable* r = w.local[level].pop()) {
    top_up_local(w, level);
    ++burst;
    return r;
  }
  if (refill_local(w, level)) {
    if (runnable* r = w.local[level].pop()) {
      ++burst;
      return r;
    }
  }
  burst = 0;
  if (runnable* r = take_from_injector(w, level)) return r;
  return steal(w, level);
}

runnable* pool_core::take_from_injector(pool_worker& w, std::size_t level) noexcept {
  pool_injector& inj = injectors_[level];
  const std::size_t queued = inj.size();
  if (queued == 0) return nullptr;
  // A fair share, so one worker does not hoard what the others could start on.
  std::size_t want = queued / workers_.size() + 1;
  if (want > pool_injector_batch_max) want = pool_injector_batch_max;
  // At most half the local queue's room and one to run: a batch that fills the queue sends this
  // worker's next spawns and yields to its overflow, out of the thieves' reach.
  const std::size_t room = work_deque_capacity - w.local[level].size_approx();
  if (want > room / 2 + 1) want = room / 2 + 1;
  std::array<runnable*, pool_injector_batch_max> batch{};
  const std::size_t n = inj.pop_batch(batch.data(), want);
  if (n == 0) return nullptr;
  if (config_.stats) w.counters.bump(w.counters.injector_batches);
  for (std::size_t i = 1; i < n; ++i) {
    if (!w.local[level].push(batch[i], static_cast<task_header*>(batch[i])->awaited_leaf())) {
      // No room (rare: the local queue was nearly full): the rest go back to the injector.
      inj.push_batch(batch.data() + i, n - i);
      break;
    }
  }
  return batch[0];
}

runnable* pool_core::steal(pool_worker& w, std::size_t level) noexcept {
  const std::size_t n = workers_.size();
  if (n == 1) return nullptr;
  // Victims in rotation, starting one further each round, so thieves spread over victims. The
  // indices wrap by comparison, not `%`: a division per victim was a visible share of a poll, as
  // every opportunity at an empty level ends here.
  std::size_t v = w.next_victim;
  w.next_victim = v + 1 == n ? 0 : v + 1;
  for (std::size_t k = 0; k < n; ++k, v = v + 1 == n ? 0 : v + 1) {
    if (v == w.index) continue;
    work_deque<runnable>& victim = workers_[v]->local[level];
    if (victim.empty_approx()) continue;
    const std::size_t before = w.local[level].size_approx();
    if (runnable* r = victim.steal_half_into(w.local[level])) {
      if (config_.stats) {
        w.counters.bump(w.counters.steals);
        w.counters.bump(w.counters.stolen, w.local[level].size_approx() - before + 1);
      }
      return r;
    }
  }
  return nullptr;
}

bool pool_core::any_work_visible() const noexcept {
  for (const pool_injector& inj : injectors_) {
    if (inj.size() != 0) return true;
  }
  for (const auto& other : workers_) {
    for (const auto& q : other->local) {
      if (!q.empty_approx()) return true;
    }
  }
  return false;
}

void pool_core::park(pool_worker& w) noexcept {
  // The re-check (pool_idle.hpp) looks at every queue and at exit_ once more.
  // acquire on exit_: as in worker_main.
  if (!idle_->prepare_park(w.index, w.searching,
                           [&] { return any_work_visible() || exit_.load(std::memory_order_acquire); })) {
    return;
  }
  if (config_.stats) w.counters.bump(w.counters.parks);
  w.parker.park();
  // Unlisted by a waker: we search now. Still listed: a token left by a wake that raced an
  // earlier re-check ended this park; unlist ourselves, so the next announce() starts from
  // unlisted.
  w.searching = idle_->woken(w.index);
}

// --- stopping ---------------------------------------------------------------------------------

void pool_core::cancel_all() noexcept {
  close_admission();
  // relaxed: see worker_main(); the unparks below order it for a parked worker, and a running
  // one sees it at a later loop.
  cancel_requested_.store(true, std::memory_order_relaxed);
  // Every worker looks at the flag before its next poll; a parked one is woken for it (a parker
  // keeps the token, so a worker parking just now returns at once).
  idle_->wake_all();
  for (auto& w : workers_) w->parker.unpark();
}

void pool_core::sweep_for_stop(pool_worker& w) noexcept {
  w.list_closed = true;
  drain_finished_elsewhere(w);
  std::uint64_t cancelled = 0;
  for (task_header* t = w.owned_head; t != nullptr; t = t->owned_next) {
    // A task on the list has not completed here, nor been handed back before the drain above.
    // One in the middle of a poll on another worker may still finish with its value; it is
    // counted all the same.
    ++cancelled;
    t->request_cancel();
  }
  // relaxed: read by stop() after joining this worker.
  cancelled_by_stop_.fetch_add(cancelled, std::memory_order_relaxed);
}

void pool_core::stop_workers() noexcept {
  if (workers_stopped_) return;
  workers_stopped_ = true;
  // release: pairs with the workers' acquire loads of exit_.
  exit_.store(true, std::memory_order_release);
  idle_->wake_all();
  for (auto& w : workers_) w->parker.unpark();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  // Nothing is left after a drain; after a start failure, nothing was ever queued.
  for (auto& inj : injectors_) inj.take_all().discard_all();
  for (auto& w : workers_) {
    for (runnable*& r : w->lifo) {
      if (r != nullptr) std::exchange(r, nullptr)->discard();
    }
    for (auto& q : w->local) {
      while (runnable* r = q.pop()) r->discard();
    }
  }
}

pool_stats pool_core::stats() const noexcept {
  pool_stats s;
  s.workers = workers_.size();
  s.parked_workers = idle_->parked_approx();
  for (std::size_t p = 0; p < priority_count; ++p) s.runnable_injector[p] = injectors_[p].size();
  for (const auto& w : workers_) {
    for (std::size_t p = 0; p < priority_count; ++p) {
      // relaxed: an estimate (pool_stats is approximate).
      s.runnable_local[p] += w->local[p].size_approx() + w->overflow_size[p].load(std::memory_order_relaxed);
    }
    // relaxed: statistics.
    s.polls += w->counters.polls.load(std::memory_order_relaxed);
    s.steals += w->counters.steals.load(std::memory_order_relaxed);
    s.stolen_tasks += w->counters.stolen.load(std::memory_order_relaxed);
    s.injector_batches += w->counters.injector_batches.load(std::memory_order_relaxed);
    s.parks += w->counters.parks.load(std::memory_order_relaxed);
    s.spawned_on_workers += w->counters.spawned_local.load(std::memory_order_relaxed);
  }
  // relaxed: statistics.
  s.spawned_external = spawned_external_.load(std::memory_order_relaxed);
  s.wake_notifications = wake_notifications_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace weft::detail
