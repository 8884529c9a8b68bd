// blocking_pool.cpp — see blocking_pool.hpp (and blocking_admission.hpp for the protocol).
#include <vector>

#include <weft/detail/blocking_pool.hpp>
#include <weft/platform/thread.hpp>

namespace weft::detail {

namespace {
struct blocking_runtime_tag;
using blocking_runtime_slot = platform::thread_slot<runtime_core, blocking_runtime_tag>;
}  // namespace

runtime_core* current_blocking_runtime() noexcept { return blocking_runtime_slot::get(); }

blocking_pool::blocking_pool(std::size_t max_threads, std::size_t max_queued, runtime_core* owner)
    : owner_(owner), admission_(max_threads, max_queued) {}

blocking_pool::~blocking_pool() {
  (void)close();
  join();
}

submit_result blocking_pool::submit(runnable* job) {
  // Called under the admission lock when the job needs a new thread; throws std::system_error
  // when none can be started (the admission then handles the job).
  return admission_.submit(job, [this](std::vector<platform::thread>& threads) {
    threads.emplace_back([this] { thread_main(); });
  });
}

void blocking_pool::thread_main() {
  blocking_runtime_slot::set(owner_);
  admission_.serve();
  blocking_runtime_slot::set(nullptr);
}

std::uint64_t blocking_pool::close() { return admission_.close(); }

void blocking_pool::join() {
  for (auto& t : admission_.take_threads()) t.join();
}

std::size_t blocking_pool::threads_started() { return admission_.threads_started(); }
std::size_t blocking_pool::queued() { return admission_.queued(); }
std::size_t blocking_pool::running() { return admission_.running(); }

}  // namespace weft::detail
