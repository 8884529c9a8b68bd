// host_table.hpp — the hosts of one run and their links, behind context's host calls
// (weft/sim/host.hpp). Every call runs on a simulated thread (normally the scenario's); a
// scenario's mistake (an unknown host, a host cut off from itself, booting a running host) fails
// the run as a usage error naming the calling line and changes nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <deque>

#include <weft/platform/clock.hpp>
#include <weft/platform/source_location.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/host.hpp>

namespace weft::sim {
class engine;
}  // namespace weft::sim

namespace weft::sim::detail {

// Tries at starting a host's main when the fault plan injects worker_start_failure.
inline constexpr int thread_start_attempts = 1'000;

class host_table {
 public:
  explicit host_table(engine& e);
  ~host_table();
  host_table(const host_table&) = delete;
  host_table& operator=(const host_table&) = delete;

  const host& this_host() const noexcept { return hosts_.front().handle; }
  std::optional<host> add(std::string_view name, const platform::source_location& loc);
  void boot(const host& h, std::function<void(host_process&)> main, const platform::source_location& loc);
  void crash(const host& h, const platform::source_location& loc);
  void shutdown(const host& h, const platform::source_location& loc);
  bool running(const host& h) const;
  // Prepares the calling thread's next spawn to start on `h`; false (a usage error) for a host
  // this run does not have.
  bool place_next_spawn(const host& h, const platform::source_location& loc);

  enum class link_change : std::uint8_t { cut, repair, hold, release };
  void change_link(const host& from, const host& to, link_change what, bool both_ways,
                   const platform::source_location& loc);
  void set_latency(const host& a, const host& b, duration low, duration high, const platform::source_location& loc);
  std::size_t reset_connections(const host& a, const host& b, const platform::source_location& loc);

  // The scenario returned: hosts still running are crashed, so the run can end.
  void end_of_scenario();

 private:
  struct record {
    host handle;
    bool up = false;
    std::uint32_t lives = 0;
    std::shared_ptr<host_process> process;
    platform::thread main;
  };
  record* find(const host& h, const char* call, const platform::source_location& loc);
  // find(), and a usage error naming `call` when the host is not running.
  record* find_running(const host& h, const char* call, const platform::source_location& loc);
  // find_running, also refusing the scenario's own host and a call from one of h's own threads.
  record* find_stoppable(const host& h, const char* call, const platform::source_location& loc);
  void usage(const std::string& what, const platform::source_location& loc);
  void stop(record& r, bool crashed);

  engine& engine_;
  std::deque<record> hosts_;  // index = host id; a deque keeps records in place while a join waits
};

}  // namespace weft::sim::detail
