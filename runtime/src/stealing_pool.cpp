// stealing_pool.cpp — the pool's handle: building (knob checks), stopping and draining.
#include <weft/stealing_pool.hpp>

#include <string>

#include <weft/platform/clock.hpp>
#include <weft/platform/thread.hpp>

namespace weft {

namespace {
void check_range(const char* knob, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi) {
    throw usage_error(std::string("stealing_pool::builder: ") + knob + " = " + std::to_string(value) +
                      " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
}
}  // namespace

stealing_pool stealing_pool::builder::build() const {
  detail::pool_config config = config_;
  if (!config.workers) config.workers = platform::hardware_concurrency();
  check_range("workers", *config.workers, 1, workers_max);
  check_range("weights.high", config.weights[index_of(priority::high)], 1, weight_max);
  check_range("weights.normal", config.weights[index_of(priority::normal)], 1, weight_max);
  check_range("weights.background", config.weights[index_of(priority::background)], 1, weight_max);
  check_range("local_burst", config.local_burst, 1, local_burst_max);
  auto* core = new detail::pool_core(std::move(config));
  stealing_pool pool(core);  // from here the handle owns the core (and stops it if start throws)
  core->start();
  return pool;
}

stealing_pool::stealing_pool(stealing_pool&& other) noexcept
    : core_(std::exchange(other.core_, nullptr)), stopped_(std::move(other.stopped_)) {}

stealing_pool& stealing_pool::operator=(stealing_pool&& other) noexcept {
  if (this != &other) {
    release();
    core_ = std::exchange(other.core_, nullptr);
    stopped_ = std::move(other.stopped_);
  }
  return *this;
}

stealing_pool::~stealing_pool() { release(); }

void stealing_pool::release() noexcept {
  if (core_ == nullptr) return;
  detail::pool_core* core = std::exchange(core_, nullptr);
  if (core->current_worker() != nullptr) {
    // Dropped on one of its own workers: it cannot wait for itself. Admission closes and every
    // task is cancelled; a thread of its own finishes the stop and lets the core go.
    core->cancel_all();
    platform::thread reaper([core] {
      core->tasks().wait_idle(std::nullopt);
      core->stop_workers();
      for (std::size_t p = 0; p < priority_count; ++p) core->owner(static_cast<priority>(p)).release();
      core->core_ref_release();
    });
    reaper.detach();
    return;
  }
  if (!core->workers_stopped()) {
    core->cancel_all();
    core->tasks().wait_idle(std::nullopt);
    core->stop_workers();
  }
  for (std::size_t p = 0; p < priority_count; ++p) core->owner(static_cast<priority>(p)).release();
  core->core_ref_release();
}

void stealing_pool::check_not_on_worker(const char* call) const {
  if (core_ == nullptr) throw usage_error(std::string("stealing_pool::") + call + " on a moved-from pool");
  if (core_->current_worker() != nullptr) {
    throw usage_error(std::string("stealing_pool::") + call + " on one of the pool's own workers would deadlock");
  }
}

pool_stats stealing_pool::stats() const {
  if (core_ == nullptr) throw usage_error("stealing_pool::stats on a moved-from pool");
  return core_->stats();
}

void stealing_pool::request_stop() const noexcept {
  if (core_ != nullptr) core_->close_admission();
}

bool stealing_pool::stop_requested() const noexcept { return core_ == nullptr || !core_->admitting(); }

drain_outcome stealing_pool::drain(std::optional<duration> deadline) {
  check_not_on_worker("drain");
  if (stopped_) throw usage_error("stealing_pool::drain after stop()");
  std::optional<instant> until;
  if (deadline) until = detail::deadline_after(platform::clock::now(), *deadline);
  core_->close_admission();
  return core_->tasks().wait_idle(until) ? drain_outcome::drained : drain_outcome::timed_out;
}

stop_outcome stealing_pool::stop() && {
  if (stopped_) return *stopped_;
  if (core_ == nullptr) return stop_outcome::make_complete();
  if (core_->current_worker() != nullptr) {
    core_->close_admission();
    return stop_outcome::make_error(stop_error::called_from_worker);
  }
  stop_counts counts;
  core_->cancel_all();
  core_->tasks().wait_idle(std::nullopt);
  core_->stop_workers();
  counts.tasks_cancelled = core_->cancelled_by_stop();
  stopped_ = stop_outcome::from_counts(counts);
  return *stopped_;
}

stop_outcome stealing_pool::stop_graceful(std::optional<duration> deadline) && {
  if (core_ != nullptr && !stopped_ && core_->current_worker() == nullptr) (void)drain(deadline);
  return std::move(*this).stop();
}

}  // namespace weft
