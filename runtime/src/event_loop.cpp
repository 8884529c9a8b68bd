// event_loop.cpp — the loop's turn, its driving calls, and its destruction.
#include <string>

#include <weft/event_loop.hpp>
#include <weft/platform/thread.hpp>
#include <weft/platform/trace.hpp>

namespace weft {

namespace {
struct current_loop_tag;
using current_loop_slot = platform::thread_slot<event_loop, current_loop_tag>;
}  // namespace

event_loop* event_loop::current() noexcept { return current_loop_slot::get(); }

std::size_t event_loop::checked_capacity(std::size_t capacity) {
  if (capacity == 0) throw usage_error("event_loop: inbox capacity must be at least 1");
  return capacity;
}

event_loop::event_loop() : event_loop(options{}) {}

event_loop::event_loop(options opts)
    : shared_(new detail::loop_shared(checked_capacity(opts.inbox_capacity), std::move(opts.telemetry),
                                      platform::current_thread_id(),
                                      platform::driver_options{opts.io_driver})) {
  shared_->loop = this;
  shared_->tally_finishes = true;
}

event_loop::~event_loop() {
  WEFT_ASSERT(!driving_);  // a loop cannot be destroyed from inside its own drive
  if (!shutting_down_) (void)shutdown();
  shared_->loop = nullptr;
  shared_->release();
}

event_loop::shutdown_report event_loop::shutdown() {
  check_owner("shutdown");
  if (driving_) throw usage_error("event_loop::shutdown called from inside the loop");
  if (shutting_down_) return shutdown_report_;
  shutting_down_ = true;
  event_loop* const outer = current_loop_slot::get();
  current_loop_slot::set(this);  // frames destroyed below may still look for "their" loop

  // 1. From now on every submission from another thread is refused; take what is queued.
  detail::runnable_queue leftovers = shared_->inbox.kill();

  // 2. Cross-thread spawns that were accepted but never adopted: complete them as cancelled
  //    (their factories never ran). Other leftovers wait for step 4.
  std::uint64_t cancelled = 0;
  detail::runnable_queue other_leftovers;
  while (detail::runnable* r = leftovers.pop_front()) {
    if (r->kind() == detail::runnable_kind::task_spawn) {
      static_cast<detail::task_header*>(r)->abandon(join_error(join_error::cancelled));
      ++cancelled;
    } else {
      other_leftovers.push_back(r);
    }
  }

  // 3. Cancel every unfinished task here, on its own thread. Destroying a frame may wake or
  //    abort other tasks; those wakes land in the queues discarded below.
  while (owned_head_ != nullptr) {
    owned_head_->cancel_at_shutdown();  // unlinks it
    ++cancelled;
  }

  // 3b. Destroying those frames abandoned their I/O: cancel whatever is still in flight and
  //     reap every completion, so no buffer the kernel may write and no operation outlives the loop.
  shared_->driver.reap_all();

  // 4. Destroy queued work unrun.
  std::uint64_t discarded = 0;
  auto discard_queue = [&discarded](detail::runnable_queue& q) {
    while (detail::runnable* r = q.pop_front()) {
      if (r->kind() == detail::runnable_kind::callback) ++discarded;
      r->discard();
    }
  };
  discard_queue(other_leftovers);
  discard_queue(microtasks_);
  discard_queue(macrotasks_);

  // 5. Timers: user timers are cancelled and lose their arming reference; whatever else is still
  //    armed (a sleep whose leaf lives outside this loop's frames) is cancelled too, so a shut-down
  //    loop holds no waker and no callback.
  for (std::uint64_t id = 1; id < next_timer_id_ && !user_timers_.empty(); ++id) {
    auto it = user_timers_.find(id);  // id order, never hash order
    if (it == user_timers_.end()) continue;
    timers_.cancel(it->second);
    it->second->release();
    user_timers_.erase(it);
  }
  timers_.cancel_all();

  // 6. Children: wait for every loop thread (spawn_loop_thread).
  for (auto& child : children_) {
    if (child->thread.joinable()) child->thread.join();
  }
  children_.clear();
  live_children_ = 0;

  if (cancelled > 0) {
    telemetry().record(telemetry_event{telemetry_kind::task_cancelled_at_shutdown,
                                       "event loop shut down with unfinished tasks", cancelled, {}});
  }
  if (discarded > 0) {
    telemetry().record(telemetry_event{telemetry_kind::discarded_at_shutdown,
                                       "event loop shut down with queued work", discarded, {}});
  }
  // The tasks the steps above finished count now; any later finish on this thread counts at once.
  shared_->report_finishes();
  shared_->tally_finishes = false;
  current_loop_slot::set(outer);
  shutdown_report_ = shutdown_report{cancelled, discarded};
  return shutdown_report_;
}

// ---- ownership and task bookkeeping -------------------------------------------------------------

void event_loop::throw_not_owner(const char* what) {
  throw usage_error(std::string("event_loop::") + what + " called off the loop's own thread");
}

void event_loop::adopt_spawned(detail::task_header* cell) noexcept {
  WEFT_TRACE_TASK(adopted, cell);
  // Link into the owned list (newest first) and queue the first poll.
  cell->mark_adopted();
  cell->set_kind(detail::runnable_kind::task_poll);
  cell->owned_prev = nullptr;
  cell->owned_next = owned_head_;
  if (owned_head_) owned_head_->owned_prev = cell;
  owned_head_ = cell;
  ++live_tasks_;
  microtasks_.push_back(cell);
}

void event_loop::task_finished(detail::task_header* cell) noexcept {
  if (cell->owned_prev) {
    cell->owned_prev->owned_next = cell->owned_next;
  } else {
    WEFT_ASSERT(owned_head_ == cell);
    owned_head_ = cell->owned_next;
  }
  if (cell->owned_next) cell->owned_next->owned_prev = cell->owned_prev;
  cell->owned_prev = cell->owned_next = nullptr;
  WEFT_ASSERT(live_tasks_ > 0);
  --live_tasks_;
}

// ---- timers ---------------------------------------------------------------------------------

void event_loop::user_timer::on_fire() {
  if (period > duration::zero()) {
    loop->timers_.arm(this, detail::deadline_after(deadline(), period));  // re-arm first: a throwing callback keeps ticking
    invoke();
    return;
  }
  // One-shot: forget the id, then run; the map's reference goes when this macrotask ends.
  auto it = loop->user_timers_.find(id);
  WEFT_ASSERT(it != loop->user_timers_.end());
  loop->user_timers_.erase(it);
  struct release_after {
    user_timer* t;
    ~release_after() { t->release(); }
  } guard{this};
  invoke();
}

timer_id event_loop::add_user_timer(duration delay, duration period, user_timer* timer) {
  if (!shared_->on_owner_thread()) {
    timer->release();  // refused: nobody else holds the new timer (it would leak otherwise)
    check_owner("set_timeout/set_interval");  // throws usage_error
  }
  timer->loop = this;
  timer->id = next_timer_id_++;
  timer->period = period;
  user_timers_.emplace(timer->id, timer);
  timers_.arm(timer, detail::deadline_after(platform::clock::now(), delay));
  return timer_id{timer->id};
}

bool event_loop::clear_timer(timer_id id) {
  check_owner("clear_timer");
  auto it = user_timers_.find(id.value);
  if (it == user_timers_.end()) return false;
  user_timer* timer = it->second;
  user_timers_.erase(it);
  timers_.cancel(timer);
  timer->release();
  return true;
}

// ---- driving ----------------------------------------------------------------------------------

event_loop::drive_scope::drive_scope(event_loop& loop, const char* what)
    : loop_(loop), previous_(nullptr), previous_domain_(nullptr) {
  loop.check_owner(what);
  if (loop.driving_) {
    throw usage_error(std::string("event_loop::") + what + " re-entered from inside the loop");
  }
  if (loop.shutting_down_) throw usage_error(std::string("event_loop::") + what + " during destruction");
  loop.driving_ = true;
  previous_ = current_loop_slot::get();
  current_loop_slot::set(&loop);
  previous_domain_ = detail::poll_domain_slot::get();
  detail::poll_domain_slot::set(loop.shared_);
  if (loop.inbox_closed_by_run_) {
    loop.shared_->inbox.reopen();
    loop.inbox_closed_by_run_ = false;
  }
}

event_loop::drive_scope::~drive_scope() {
  detail::poll_domain_slot::set(previous_domain_);
  current_loop_slot::set(previous_);
  loop_.driving_ = false;
}

void event_loop::poll_driver_events() {
  // Completions wake their tasks. The driver's own completions (a cross-thread wake) are reaped
  // too, even with no operation in flight: left in the queue they would end every later wait at
  // once, and the loop would spin.
  if (shared_->driver.in_flight() > 0 || shared_->driver.has_completions()) (void)shared_->driver.poll();
  if (timers_.armed() == 0) return;  // no clock read on turns without timers
  timers_.expire(platform::clock::now(), macrotasks_);
}

bool event_loop::timer_expired() {
  return timers_.armed() > 0 && timers_.has_expired(platform::clock::now());
}

std::size_t event_loop::drain_remote() {
  detail::runnable_queue arrived;
  shared_->inbox.drain_into(arrived);
  const std::size_t taken = arrived.size();
  while (detail::runnable* r = arrived.pop_front()) {
    switch (r->kind()) {
      case detail::runnable_kind::task_poll:
        microtasks_.push_back(r);
        break;
      case detail::runnable_kind::task_spawn:
        adopt_spawned(static_cast<detail::task_header*>(r));
        break;
      case detail::runnable_kind::callback:
        macrotasks_.push_back(r);
        break;
    }
  }
  return taken;
}

void event_loop::run_guarded(detail::runnable* r) noexcept {
  try {
    r->run();
  } catch (...) {
    telemetry().record(telemetry_event{telemetry_kind::callback_panicked, "a loop callback threw", 1,
                                       std::current_exception()});
  }
}

std::size_t event_loop::run_checkpoint() {
  std::size_t ran = 0;
  // The starvation check: at the threshold, then every starvation_recheck_interval microtasks
  // until it warns. Asking the inbox and the clock at every poll of a long checkpoint (a yield
  // storm is one) cost a visible share of each poll.
  std::size_t next_check = starvation_checkpoint_threshold + 1;
  while (detail::runnable* r = microtasks_.pop_front()) {
    run_guarded(r);
    if (++ran == next_check) {
      const bool macrotask_waiting = !macrotasks_.empty() || shared_->inbox.has_pending() || timer_expired();
      if (macrotask_waiting) {
        next_check = 0;  // warned: once per checkpoint (ran never comes back to 0)
        telemetry().record(telemetry_event{telemetry_kind::microtask_starvation,
                                           "microtask checkpoint is starving a waiting macrotask", ran, {}});
      } else {
        next_check += starvation_recheck_interval;
      }
    }
  }
  return ran;
}

bool event_loop::run_one_macrotask() {
  detail::runnable* r = macrotasks_.pop_front();
  if (!r) return false;
  run_guarded(r);
  return true;
}

std::size_t event_loop::turn(bool poll_driver, std::size_t* inbox_items) {
  if (poll_driver) poll_driver_events();           // 1. driver events
  const std::size_t taken = drain_remote();        // 2. remote inbox
  if (inbox_items) *inbox_items = taken;
  const std::size_t ran = run_checkpoint();        // 3. all microtasks
  const bool macro = run_one_macrotask();          // 4. one macrotask
  shared_->report_finishes();                      // the turn's finished tasks, at once
  return taken + ran + (macro ? 1 : 0);
}

bool event_loop::run_one_turn(std::size_t* inbox_items) {
  drive_scope scope(*this, "run_one_turn");
  return turn(true, inbox_items) > 0;
}

bool event_loop::has_queued_work() const noexcept {
  return !microtasks_.empty() || !macrotasks_.empty() || shared_->inbox.has_pending();
}

// A completion for an operation in flight. The driver's own completions (a wake) are not work:
// a wait returns at once for them and the next turn's poll reaps them.
bool event_loop::io_completed() const noexcept {
  return shared_->driver.in_flight() > 0 && shared_->driver.has_completions();
}

bool event_loop::has_ready_work() { return has_queued_work() || timer_expired() || io_completed(); }

void event_loop::wait_for_events() { shared_->driver.wait(timers_.next_deadline()); }

void event_loop::run() {
  drive_scope scope(*this, "run");
  for (;;) {
    turn(true);
    if (has_ready_work()) continue;
    if (timers_.armed() > 0 || live_children_ > 0 || keepalive_ > 0 || shared_->driver.in_flight() > 0) {
      wait_for_events();
      continue;
    }
    // Nothing left: commit the close. It fails if remote work arrived since the check above,
    // and then that work runs before we try again.
    if (!shared_->inbox.try_close()) continue;
    inbox_closed_by_run_ = true;
    return;
  }
}

void event_loop::run_until_stalled() {
  drive_scope scope(*this, "run_until_stalled");
  do {
    turn(true);
  } while (has_ready_work());
}

void event_loop::run_ready_tasks() {
  drive_scope scope(*this, "run_ready_tasks");
  do {
    turn(false);
  } while (has_queued_work());
}

}  // namespace weft
