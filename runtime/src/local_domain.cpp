// local_domain.cpp — host-driven stepping of an event loop.
#include <weft/local_domain.hpp>

namespace weft {

std::size_t local_domain::run_n(std::size_t steps) {
  std::size_t ran = 0;
  while (ran < steps && loop_.has_ready_work()) {
    (void)loop_.run_one_turn();
    ++ran;
  }
  return ran;
}

run_stats local_domain::run_for(duration budget) {
  run_stats stats;
  const instant start = platform::clock::now();
  while (platform::clock::now() - start < budget && loop_.has_ready_work()) {
    std::size_t taken = 0;
    (void)loop_.run_one_turn(&taken);
    ++stats.drive_steps;
    stats.inbox_commands += taken;
  }
  stats.elapsed = platform::clock::now() - start;
  return stats;
}

}  // namespace weft
