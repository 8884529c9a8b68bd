// blocking_pool.cpp — see blocking_pool.hpp.
#include <system_error>

#include <weft/detail/blocking_pool.hpp>
#include <weft/platform/fault.hpp>

namespace weft::detail {

namespace {
struct blocking_runtime_tag;
using blocking_runtime_slot = platform::thread_slot<runtime_core, blocking_runtime_tag>;
}  // namespace

runtime_core* current_blocking_runtime() noexcept { return blocking_runtime_slot::get(); }

blocking_pool::blocking_pool(std::size_t max_threads, std::size_t max_queued, runtime_core* owner)
    : max_threads_(max_threads == 0 ? 1 : max_threads), max_queued_(max_queued == 0 ? 1 : max_queued), owner_(owner) {}

blocking_pool::~blocking_pool() {
  (void)close();
  join();
}

submit_result blocking_pool::submit(runnable* job) {
  bool start_thread = false;
  {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (closed_) {
      job->discard();
      return unexpected(queue_error::closed);
    }
    // Threads that will take a queued job without a new thread: idle ones and ones still
    // starting. Jobs beyond those are the ones that really wait, and only they count against
    // max_queued.
    const std::size_t takers = idle_ + starting_;
    const std::size_t queued = queue_.size();
    const bool taker_available = takers > queued;
    const bool can_grow = threads_.size() < max_threads_;
    const std::size_t waiting = queued > takers ? queued - takers : 0;
    if (WEFT_FAULT_POINT(blocking_saturated) || (!taker_available && !can_grow && waiting >= max_queued_)) {
      job->discard();
      return unexpected(queue_error::full);
    }
    queue_.push_back(job);
    if (!taker_available && can_grow) {
      try {
        threads_.emplace_back([this] { thread_main(); });
        ++starting_;
        start_thread = true;
      } catch (const std::system_error&) {
        // No new thread: the job waits for an existing one, or is refused if there is none.
        if (threads_.empty()) {
          queue_.pop_back();
          job->discard();
          return unexpected(queue_error::full);
        }
      }
    }
  }
  if (!start_thread) work_ready_.notify_one();
  return {};
}

void blocking_pool::thread_main() {
  blocking_runtime_slot::set(owner_);
  sync::unique_lock<sync::mutex> hold(lock_);
  WEFT_ASSERT(starting_ > 0);
  --starting_;  // from here on this thread is counted as idle or running
  for (;;) {
    while (queue_.empty() && !closed_) {
      ++idle_;
      work_ready_.wait(hold);
      --idle_;
    }
    if (queue_.empty()) break;  // closed and nothing left
    runnable* job = queue_.front();
    queue_.pop_front();
    ++running_;
    hold.unlock();
    (void)WEFT_FAULT_POINT(stop_request);  // the simulator may request a stop as a job starts
    job->run();  // blocking jobs never throw (their exceptions are their results)
    hold.lock();
    --running_;
  }
  blocking_runtime_slot::set(nullptr);
}

std::uint64_t blocking_pool::close() {
  std::deque<runnable*> dropped;
  {
    sync::lock_guard<sync::mutex> hold(lock_);
    if (closed_) return 0;
    closed_ = true;
    dropped.swap(queue_);
  }
  work_ready_.notify_all();
  for (runnable* job : dropped) job->discard();
  return dropped.size();
}

void blocking_pool::join() {
  std::vector<platform::thread> threads;
  {
    sync::lock_guard<sync::mutex> hold(lock_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

std::size_t blocking_pool::threads_started() {
  sync::lock_guard<sync::mutex> hold(lock_);
  return threads_.size();
}
std::size_t blocking_pool::queued() {
  sync::lock_guard<sync::mutex> hold(lock_);
  return queue_.size();
}
std::size_t blocking_pool::running() {
  sync::lock_guard<sync::mutex> hold(lock_);
  return running_;
}

}  // namespace weft::detail
