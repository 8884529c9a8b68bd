// weft/pool_stats.hpp — what stealing_pool::stats() reports.
#pragma once

#include <weft/compiler_support.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

#include <weft/priority.hpp>

namespace weft {

// An approximate snapshot: every field is read without stopping the pool, so the fields need not
// agree with each other. Counters are zero when the pool was built with stats(false).
struct pool_stats {
  std::size_t workers = 0;
  std::size_t parked_workers = 0;
  std::array<std::size_t, priority_count> runnable_local{};     // per priority, in workers' queues
  std::array<std::size_t, priority_count> runnable_injector{};  // per priority, in the injectors
  std::uint64_t polls = 0;
  std::uint64_t steals = 0;            // successful steal operations
  std::uint64_t stolen_tasks = 0;      // runnables they moved
  std::uint64_t injector_batches = 0;  // batches workers took from the injectors
  std::uint64_t spawned_on_workers = 0;
  std::uint64_t spawned_external = 0;
  std::uint64_t parks = 0;
  std::uint64_t wake_notifications = 0;
};

}  // namespace weft
