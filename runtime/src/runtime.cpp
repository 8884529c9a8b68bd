// runtime.cpp — startup, shutdown and the worker main loop of weft::runtime.
//
// Startup (runtime_core::start):
//   1. start worker threads in index order; each builds its event_loop and publishes its
//      thread_handle under lifecycle_lock_, then waits for `go` (or `abort_start_`);
//   2. once every endpoint is published the builder fills `endpoints_`, creates the blocking
//      pools, opens admission (release) and sets `go`;
//   3. each worker installs its builtins, reports ready, and drives its loop until stop.
//   With pin_workers, each worker first pins itself to its CPU (chosen before any thread
//   starts); a refused pin is recorded under lifecycle_lock_ and fails the start like a thread
//   that did not start.
//   A thread that fails to start sets `abort_start_`: the started workers wake, tear their loops
//   down and exit; they are joined and start_error is thrown.
// Shutdown (request_stop, then wait_stopped or orphan):
//   1. admission closes; 2. stop is flagged and every worker's driver notified; 3. each worker
//   leaves its drive, shuts its loop down on its own thread (unfinished tasks cancelled there,
//   queued work discarded, later submissions refused) and adds its counts; 4. the blocking pools
//   close (queued callbacks discarded unrun) and their threads are joined once running
//   callbacks return.
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <weft/platform/fault.hpp>
#include <weft/runtime.hpp>

namespace weft {

namespace {
struct worker_core_tag;
using worker_core_slot = platform::thread_slot<detail::runtime_core, worker_core_tag>;
}  // namespace

namespace detail {

// ---- runtime_core -----------------------------------------------------------------------------

runtime_core::runtime_core(runtime_config config) : config_(std::move(config)) {
  const std::string range = "; accepted: 1 to " + std::to_string(runtime_config::workers_max);
  if (!config_.workers) {
    const std::size_t cores = platform::hardware_concurrency();
    if (cores == 0 || cores > runtime_config::workers_max) {
      throw usage_error("runtime::builder: the default worker count (one per core, " + std::to_string(cores) +
                        ") is out of range" + range + "; set workers()");
    }
    config_.workers = cores;
  }
  if (*config_.workers == 0 || *config_.workers > runtime_config::workers_max) {
    throw usage_error("runtime::builder: workers(" + std::to_string(*config_.workers) + ") is out of range" + range +
                      " (leave it unset for one per core)");
  }
  if (!config_.telemetry) config_.telemetry = noop_telemetry();
  if (config_.inbox_capacity == 0) {
    throw usage_error("runtime::builder: inbox_capacity(0) is out of range; accepted: at least 1");
  }
  if (config_.blocking_max_threads == 0 || config_.blocking_max_queued == 0) {
    throw usage_error("runtime::builder: blocking_capacity(" + std::to_string(config_.blocking_max_threads) + ", " +
                      std::to_string(config_.blocking_max_queued) +
                      ") is out of range; accepted: at least 1 thread and at least 1 queued callback");
  }
}

runtime_core::~runtime_core() = default;

std::optional<std::size_t> runtime_core::current_worker() const noexcept {
  if (worker_core_slot::get() != this) return std::nullopt;
  builtins* b = builtins::try_current();
  if (b == nullptr) return std::nullopt;
  return b->worker().index;
}

void runtime_core::start(const std::shared_ptr<runtime_core>& self) {
  const std::size_t n = *config_.workers;  // set and checked by the constructor
  if (config_.pin_workers) {
    // The CPUs the building thread may use: worker i gets the i-th of them (modulo).
    const std::vector<unsigned> cpus = platform::allowed_cpus();
    if (cpus.empty()) throw start_error(0, "pin_workers: the CPUs this process may use are unknown");
    for (std::size_t i = 0; i < n; ++i) worker_cpus_.push_back(cpus[i % cpus.size()]);
  }
  published_.resize(n);
  std::size_t started = 0;
  std::optional<start_error> failure;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      // A refused thread throws std::system_error; the sim flavor's platform::thread injects
      // that refusal itself (fault worker_start_failure), so no point is placed here.
      threads_.emplace_back([self, i] { self->worker_main(self, i); });
      ++started;
    } catch (const std::system_error& e) {
      failure.emplace(i, e.what());
      break;
    }
  }

  sync::unique_lock<sync::mutex> hold(lifecycle_lock_);
  while (published_count_ < started) lifecycle_cv_.wait(hold);
  if (!failure && pin_failure_) failure.emplace(pin_failure_->first, pin_failure_->second);
  if (failure) {
    abort_start_ = true;
    hold.unlock();
    lifecycle_cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    throw *failure;
  }
  for (std::size_t i = 0; i < n; ++i) {
    endpoints_.push_back(endpoint{published_[i].shared(), published_[i]});
  }
  const std::size_t pools = config_.blocking == blocking_policy::per_worker ? n : 1;
  for (std::size_t i = 0; i < pools; ++i) {
    pools_.push_back(std::make_unique<blocking_pool>(config_.blocking_max_threads, config_.blocking_max_queued, this));
  }
  // release: publishes endpoints_ and pools_ to every submitter (paired with admitting()).
  admitting_.store(true, std::memory_order_release);
  go_ = true;
  hold.unlock();
  lifecycle_cv_.notify_all();
  hold.lock();
  while (ready_count_ < n) lifecycle_cv_.wait(hold);
}

void runtime_core::worker_main(const std::shared_ptr<runtime_core>& self, std::size_t index) {
  // First, so that the loop's memory is touched from the worker's own CPU. A refusal fails the
  // runtime's start (start_error): pinning was asked for explicitly.
  if (!worker_cpus_.empty()) {
    const unsigned cpu = worker_cpus_[index];
    int err = platform::pin_current_thread(cpu);
    if (err == 0 && WEFT_FAULT_POINT(worker_start_failure)) err = EPERM;  // the simulator refuses the pin
    if (err != 0) {
      sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
      if (!pin_failure_) {
        pin_failure_.emplace(index, "cannot pin it to CPU " + std::to_string(cpu) + ": " +
                                        std::system_category().message(err));
      }
    }
  }
  event_loop::options opts;
  opts.inbox_capacity = config_.inbox_capacity;
  opts.telemetry = config_.telemetry;
  opts.io_driver = config_.io_driver;
  event_loop loop(std::move(opts));
  loop.shared()->counter = &tasks_;  // before the loop is published

  {
    sync::unique_lock<sync::mutex> hold(lifecycle_lock_);
    published_[index] = loop.handle();
    ++published_count_;
    lifecycle_cv_.notify_all();
    while (!go_ && !abort_start_) lifecycle_cv_.wait(hold);
    if (abort_start_) return;  // the loop is torn down here, on its thread
  }

  builtins own(weft::scheduler(self, index), self, index);
  builtins::install(&own);
  worker_core_slot::set(this);
  {
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    ++ready_count_;
  }
  lifecycle_cv_.notify_all();

  loop.run_until([this] { return stop_requested(); });
  const event_loop::shutdown_report report = loop.shutdown();

  worker_core_slot::set(nullptr);
  builtins::install(nullptr);
  {
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    totals_.tasks_cancelled += report.tasks_cancelled;
    totals_.callbacks_discarded += report.callbacks_discarded;
  }
  worker_exited();
}

void runtime_core::request_stop() noexcept {
  // release: orders the admission close before the stop flag (paired with the acquire loads);
  // a worker that sees the stop flag also sees admission closed.
  admitting_.store(false, std::memory_order_release);
  if (stop_requested_.exchange(true, std::memory_order_acq_rel)) return;  // idempotent
  for (const endpoint& ep : endpoints_) ep.shared->driver.notify();
}

std::uint64_t runtime_core::close_pools() {
  std::uint64_t discarded = 0;
  for (auto& pool : pools_) discarded += pool->close();
  return discarded;
}

void runtime_core::worker_exited() {
  bool last_and_orphaned = false;
  {
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    ++exited_count_;
    last_and_orphaned = orphaned_ && exited_count_ == endpoints_.size() && !pools_closed_;
    if (last_and_orphaned) pools_closed_ = true;
  }
  lifecycle_cv_.notify_all();
  if (last_and_orphaned) {
    const std::uint64_t discarded = close_pools();
    if (current_blocking_runtime() != this) {
      for (auto& pool : pools_) pool->join();
    }
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    totals_.blocking_discarded += discarded;
  }
}

stop_counts runtime_core::wait_stopped() {
  request_stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  bool close_here = false;
  {
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    if (!pools_closed_) {
      pools_closed_ = true;
      close_here = true;
    }
  }
  if (close_here) {
    const std::uint64_t discarded = close_pools();
    for (auto& pool : pools_) pool->join();
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    totals_.blocking_discarded += discarded;
  }
  sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
  return totals_;
}

void runtime_core::orphan() noexcept {
  request_stop();
  bool close_now = false;
  {
    sync::lock_guard<sync::mutex> hold(lifecycle_lock_);
    orphaned_ = true;
    close_now = exited_count_ == endpoints_.size() && !pools_closed_;
    if (close_now) pools_closed_ = true;
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.detach();
  }
  threads_.clear();
  if (close_now) (void)close_pools();  // the caller is a blocking thread: it cannot join its pool
}

}  // namespace detail

// ---- runtime ------------------------------------------------------------------------------------

namespace {
// The deleter of a runtime_core. The last reference can be dropped on one of the runtime's own
// blocking threads: stop() or the destructor called from a blocking callback, after every worker
// already exited (then no worker joins the pools). Destroying the core there would make the
// pool join that very thread and free the pool its thread_main is still running in. So the
// destruction moves to a short-lived thread, which joins the pool threads (this one included,
// once its callback returned). If no thread can be had, the core is leaked rather than
// destroyed under its own thread.
void destroy_core(detail::runtime_core* core) noexcept {
  if (detail::current_blocking_runtime() != core) {
    delete core;
    return;
  }
  try {
    platform::thread reaper([core] { delete core; });
    reaper.detach();
  } catch (const std::system_error&) {
    // leaked: see above
  }
}
}  // namespace

runtime runtime::builder::build() const {
  // A driver the workers cannot have fails the start here, before any thread: io_uring's
  // availability is the process's, so one probe on this thread answers for every worker.
  if (config_.io_driver == io_driver_choice::io_uring) {
    try {
      platform::driver probe(platform::driver_options{config_.io_driver});
    } catch (const io_unavailable_error& e) {
      throw start_error(0, e.what());
    }
  }
  std::shared_ptr<detail::runtime_core> core(new detail::runtime_core(config_), destroy_core);
  core->start(core);
  return runtime(std::move(core));
}

runtime::runtime(runtime&& other) noexcept
    : core_(std::move(other.core_)), stopped_(std::exchange(other.stopped_, std::nullopt)) {}

runtime& runtime::operator=(runtime&& other) noexcept {
  if (this != &other) {
    shut_down_and_wait();
    core_ = std::move(other.core_);
    stopped_ = std::exchange(other.stopped_, std::nullopt);
  }
  return *this;
}

runtime::~runtime() { shut_down_and_wait(); }

namespace {
constexpr const char* moved_from_state = " on a moved-from runtime (it owns no workers)";

// Throws unless `core` exists and has a worker `index` (for runtime::`call`).
void check_worker(const detail::runtime_core* core, const char* call, std::size_t index) {
  if (!core) throw usage_error(std::string("runtime::") + call + moved_from_state);
  if (index >= core->worker_count()) {
    throw usage_error(std::string("runtime::") + call + "(" + std::to_string(index) +
                      "): no such worker; the runtime has " + std::to_string(core->worker_count()));
  }
}
}  // namespace

void runtime::check_running(const char* call) const {
  if (stopped_) throw usage_error(std::string("runtime::") + call + " on a stopped runtime (its stop() has returned)");
  if (!core_) throw usage_error(std::string("runtime::") + call + moved_from_state);
}

weft::scheduler runtime::worker_scheduler(std::size_t index) const {
  check_worker(core_.get(), "worker_scheduler", index);
  return weft::scheduler(core_, index);
}

std::optional<unsigned> runtime::worker_cpu(std::size_t index) const {
  check_worker(core_.get(), "worker_cpu", index);
  return core_->worker_cpu(index);
}

void runtime::request_stop() const noexcept {
  if (core_) core_->request_stop();
}
bool runtime::stop_requested() const noexcept { return core_ && core_->stop_requested(); }

namespace {
// The reason stop() cannot wait on this thread, if any.
std::optional<stop_error> cannot_wait_here(const detail::runtime_core* core) noexcept {
  if (core->current_worker()) return stop_error::called_from_worker;
  if (detail::current_blocking_runtime() == core) return stop_error::called_from_blocking_callback;
  return std::nullopt;
}
}  // namespace

void runtime::shut_down_and_wait() noexcept {
  if (!core_) return;
  std::shared_ptr<detail::runtime_core> core = std::move(core_);
  if (stopped_) return;  // a stop() already waited for everything
  if (cannot_wait_here(core.get())) {
    core->orphan();
  } else {
    (void)core->wait_stopped();
  }
}

stop_outcome runtime::stop() && {
  if (stopped_) return *stopped_;
  if (!core_) return stop_outcome::make_complete();  // moved from: nothing of ours to stop
  if (const auto reason = cannot_wait_here(core_.get())) {
    // Only the request: the runtime stays this object's, so that its owner's stop() (or
    // destructor) on a thread that can wait still waits and reports what shutdown did.
    core_->request_stop();
    return stop_outcome::make_error(*reason);
  }
  stopped_ = stop_outcome::from_counts(core_->wait_stopped());
  return *stopped_;
}

drain_outcome runtime::drain(std::optional<duration> deadline) {
  check_running("drain");
  if (cannot_wait_here(core_.get())) throw usage_error("runtime::drain would deadlock on this thread");
  std::optional<instant> until;
  if (deadline) until = detail::deadline_after(platform::clock::now(), *deadline);
  // Close admission (not the workers): accepted work keeps running to completion.
  core_->close_admission();
  return core_->tasks().wait_idle(until) ? drain_outcome::drained : drain_outcome::timed_out;
}

stop_outcome runtime::stop_graceful(std::optional<duration> deadline) && {
  if (core_ && !stopped_ && !cannot_wait_here(core_.get())) (void)drain(deadline);
  return std::move(*this).stop();
}

void runtime::check_block_on_caller() const {
  check_running("block_on");
  if (core_->current_worker()) throw usage_error("runtime::block_on on one of the runtime's workers would block it");
}

}  // namespace weft
