// driver.cpp — the real driver: backend selection, and the owner's spin-then-block wait.
#include <cstdlib>
#include <cstring>
#include <string>

#include <weft/platform/real/driver.hpp>
#include <weft/platform/thread.hpp>

#include "backends.hpp"

namespace weft::platform {

namespace {

// WEFT_DRIVER names a backend when the loop's options leave the choice automatic. Anything else
// set there is a usage error, not a silent default.
io_driver_choice choice_from_environment() {
  const char* value = std::getenv("WEFT_DRIVER");
  if (value == nullptr || *value == '\0') return io_driver_choice::automatic;
  if (std::strcmp(value, "epoll") == 0) return io_driver_choice::epoll;
  if (std::strcmp(value, "io_uring") == 0) return io_driver_choice::io_uring;
  throw std::invalid_argument(std::string("WEFT_DRIVER must be \"epoll\" or \"io_uring\", not \"") + value + "\"");
}

}  // namespace

driver::driver(const driver_options& options) {
  io_driver_choice choice = options.choice;
  bool from_environment = false;
  if (choice == io_driver_choice::automatic) {
    choice = choice_from_environment();
    from_environment = choice != io_driver_choice::automatic;
  }
  if (choice == io_driver_choice::epoll) {
    backend_ = make_epoll_backend();
    fallback_reason_ = from_environment ? io_unavailable::forced_by_environment : io_unavailable::forced_by_option;
    return;
  }
  io_unavailable why{};
  backend_ = make_uring_backend(&why);
  if (backend_) return;
  if (choice == io_driver_choice::io_uring) {
    throw io_unavailable_error(why, std::string("io_uring was required") +
                                        (from_environment ? " (WEFT_DRIVER=io_uring)" : "") +
                                        " but is unavailable: " + to_string(why));
  }
  backend_ = make_epoll_backend();
  fallback_reason_ = why;
}

driver::~driver() = default;

void driver::wait(std::optional<instant> deadline) {
  backend_->flush();
  if (spin(deadline)) return;
  if (leave_or_consume(spinning, sleeping)) return;
  backend_->block(deadline);
  // acquire: pairs with notify()'s release when a token arrived meanwhile (consumed here).
  (void)state_.exchange(empty, std::memory_order_acquire);
}

// Polls for a token or a completion before the owner sleeps: a wake that arrives within the
// spin costs no system call on either side (spin_policy, parker.hpp). Returns true when the wait
// is over (a token consumed, or a completion ready), with the state back at `empty`; false with
// the state at `spinning`.
bool driver::spin(std::optional<instant> deadline) {
  if (try_consume_token() || backend_->has_completions()) return true;
  // A hint for placement, stored only when it changes: spawners read this line.
  if (const int cpu = current_cpu(); cpu != owner_cpu_.load(std::memory_order_relaxed)) {
    owner_cpu_.store(cpu, std::memory_order_relaxed);  // relaxed: nothing is read through it
  }
  if (leave_or_consume(empty, spinning)) return true;
  bool token = false;
  const bool over = spin_.spin(
      [this, &token] {
        // relaxed: a hint; try_consume_token() does the acquire.
        token = state_.load(std::memory_order_relaxed) == notified && try_consume_token();
        return token || backend_->has_completions();
      },
      deadline);
  if (over && !token) (void)leave_or_consume(spinning, empty);  // a completion ended the spin
  return over;
}

}  // namespace weft::platform
