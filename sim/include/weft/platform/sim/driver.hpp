// weft/platform/sim/driver.hpp — the sim flavor's driver: a parker on virtual time in front of
// the run's simulated kernel (sim/src/io/).
//
// wait() and notify() are the parker driver's (parker_driver.hpp): a token on the seam's sync
// types, every step a scheduling point. The I/O half hands each request to the run's simulated
// kernel, which finishes it at once or when another simulated thread makes it possible (a peer's
// send, a connect); its completion is then due at a virtual time (now, or later under the
// io_latency fault), and wait() never sleeps past the earliest one, so virtual time advances
// with simulated latency. submit() and execute() are scheduling points ("io.submit",
// "io.execute"), like the system calls they stand for. Outside a run there is no kernel: every
// request answers -ENOSYS, as parker_driver does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>
#include <weft/platform/owner_activity.hpp>
#include <weft/platform/source_location.hpp>

namespace weft::sim::io {
class endpoint;
class world;
}  // namespace weft::sim::io

namespace weft::platform {

class driver {
 public:
  driver() : driver(driver_options{}) {}
  // Every choice (io_uring, epoll, automatic) runs on the simulated kernel: a program that insists
  // on io_uring runs unchanged in the simulator.
  explicit driver(const driver_options& options);
  // Delivers whatever is still in flight (reap_all), so every submit completes exactly once.
  ~driver();
  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;

  // Owner thread only.
  void wait(std::optional<instant> deadline);
  // Any thread.
  void notify();
  // Any thread, a hint (driver.hpp): not tracked, so placement in the simulator is round-robin,
  // a function of submission order alone (a simulated loop never spins in wait()).
  owner_activity activity() const noexcept { return owner_activity::other; }
  int owner_cpu() const noexcept { return -1; }

  // I/O half (owner thread).
  void submit(io_operation& op, source_location loc = source_location::current());
  void cancel(io_operation& op) noexcept;
  std::int64_t execute(const io_request& r, source_location loc = source_location::current());
  // A file read the simulated page cache answers now: a seeded half of them miss (-EAGAIN), so a
  // program meets both the inline and the submitted path. A scheduling point ("io.try_now").
  std::int64_t try_now(const io_request& r, source_location loc = source_location::current());
  std::size_t poll();
  bool has_completions() const noexcept;
  std::size_t in_flight() const noexcept;
  void reap_all();
  io_driver_status status() const noexcept { return {io_backend::simulated, std::nullopt}; }

 private:
  std::size_t deliver(bool everything);
  void wake_others();

  // Shared with the kernel's records of this driver's waiting operations, so a thread that
  // unparks this driver keeps its parker alive however the owner's loop ends meanwhile.
  std::shared_ptr<sim::io::endpoint> endpoint_;
  io_operation* refused_head_ = nullptr;  // outside a run: completed -ENOSYS at the next poll
  io_operation* refused_tail_ = nullptr;
  std::size_t refused_ = 0;
};

// The buffer-lifetime oracle: `op` is being freed. When the run's simulated kernel still holds it
// (submitted, not delivered), the run fails and stops here, before anything writes the freed
// buffers or completes the freed operation.
void io_operation_freed(const io_operation& op) noexcept;

}  // namespace weft::platform
