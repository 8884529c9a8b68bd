// driver.cpp — the sim flavor's platform::driver over the run's simulated kernel (driver.hpp).
#include <weft/platform/driver.hpp>

#include <cerrno>
#include <string>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>
#include <weft/sim/hooks.hpp>

#include "endpoint.hpp"
#include "world.hpp"

namespace weft::platform {

namespace {

const char* opcode_name(io_opcode op) noexcept {
  switch (op) {
    case io_opcode::nop: return "nop";
    case io_opcode::read: return "read";
    case io_opcode::write: return "write";
    case io_opcode::readv: return "readv";
    case io_opcode::writev: return "writev";
    case io_opcode::recv: return "recv";
    case io_opcode::send: return "send";
    case io_opcode::recvmsg: return "recvmsg";
    case io_opcode::sendmsg: return "sendmsg";
    case io_opcode::accept: return "accept";
    case io_opcode::connect: return "connect";
    case io_opcode::poll: return "poll";
    case io_opcode::openat: return "openat";
    case io_opcode::fsync: return "fsync";
    case io_opcode::statx: return "statx";
    case io_opcode::ftruncate: return "ftruncate";
    case io_opcode::unlinkat: return "unlinkat";
    case io_opcode::renameat: return "renameat";
    case io_opcode::shutdown: return "shutdown";
    case io_opcode::socket: return "socket";
    case io_opcode::bind: return "bind";
    case io_opcode::listen: return "listen";
    case io_opcode::setsockopt: return "setsockopt";
    case io_opcode::getsockopt: return "getsockopt";
    case io_opcode::getsockname: return "getsockname";
    case io_opcode::getpeername: return "getpeername";
    case io_opcode::close: return "close";
    case io_opcode::spawn: return "spawn";
    case io_opcode::socketpair: return "socketpair";
    case io_opcode::pipe: return "pipe";
    case io_opcode::waitid: return "waitid";
    case io_opcode::kill: return "kill";
  }
  return "?";
}

}  // namespace

driver::driver(const driver_options&) : endpoint_(std::make_shared<sim::io::endpoint>()) {}

driver::~driver() { reap_all(); }

void driver::wait(std::optional<instant> deadline) {
  if (refused_head_ != nullptr) return;
  // The earliest completion bounds the wait: the engine's clock jumps to it when every simulated
  // thread is blocked, which is how simulated latency passes.
  if (const std::optional<instant> due = endpoint_->next_due()) {
    if (*due <= clock::now()) return;
    if (!deadline || *due < *deadline) deadline = due;
  }
  if (deadline) {
    (void)endpoint_->parker().park_until(*deadline);
  } else {
    endpoint_->parker().park();
  }
}

void driver::notify() { endpoint_->parker().unpark(); }

void driver::submit(io_operation& op, source_location loc) {
  sim::detail::yield_point("io.submit", loc);
  sim::io::world* w = sim::detail::io_world();
  if (w == nullptr) {
    op.driver_next = nullptr;
    if (refused_tail_ != nullptr) {
      refused_tail_->driver_next = &op;
    } else {
      refused_head_ = &op;
    }
    refused_tail_ = &op;
    ++refused_;
    return;
  }
  w->submit(endpoint_, op);
  wake_others();
}

void driver::cancel(io_operation& op) noexcept {
  sim::io::world* w = sim::detail::io_world();
  if (w == nullptr) return;  // a refused operation completes -ENOSYS at the next poll anyway
  w->cancel(*endpoint_, op);
  wake_others();
}

std::int64_t driver::execute(const io_request& r, source_location loc) {
  sim::detail::yield_point("io.execute", loc);
  sim::io::world* w = sim::detail::io_world();
  if (w == nullptr) return -ENOSYS;
  const std::int64_t result = w->execute(r);
  wake_others();
  return result;
}

std::int64_t driver::try_now(const io_request& r, source_location loc) {
  sim::detail::yield_point("io.try_now", loc);
  sim::io::world* w = sim::detail::io_world();
  if (w == nullptr) return -ENOSYS;
  return w->read_if_cached(r);  // a file read changes nothing another thread waits on: no wakes
}

// Unparks the drivers whose operations this thread's step finished. Unparking is a scheduling
// point, so it runs after the kernel's step, never inside it.
void driver::wake_others() {
  sim::io::world* w = sim::detail::io_world();
  if (w == nullptr) return;
  while (const std::shared_ptr<sim::io::endpoint> other = w->take_wake(endpoint_.get())) other->parker().unpark();
}

std::size_t driver::deliver(bool everything) {
  // Counted as delivered, not as the change in in_flight(): a completion may submit more.
  std::size_t delivered = 0;
  while (io_operation* op = refused_head_) {
    refused_head_ = op->driver_next;
    if (refused_head_ == nullptr) refused_tail_ = nullptr;
    --refused_;
    ++delivered;
    op->complete(-ENOSYS);
  }
  while (const std::optional<sim::io::scheduled_completion> c = endpoint_->take_next(clock::now(), everything)) {
    const std::string line = std::string("io ") + opcode_name(c->op->opcode) + " -> " + std::to_string(c->result);
    sim::detail::trace_note(line.c_str());
    ++delivered;
    if (c->message != 0) sim::detail::trace_message(true, c->message, sim::detail::current_host().host, line);
    if (sim::io::world* w = sim::detail::existing_io_world()) w->delivered(*c->op);
    c->op->complete(c->result);
  }
  return delivered;
}

std::size_t driver::poll() { return deliver(false); }

void io_operation_freed(const io_operation& op) noexcept {
  const sim::io::world* w = sim::detail::existing_io_world();
  if (w == nullptr || !w->holds(op)) return;
  const std::string what = std::string("buffer-lifetime oracle: an I/O operation (") + opcode_name(op.opcode) +
                           " on fd " + std::to_string(op.fd) +
                           ") was freed while the simulated kernel holds it (submitted, not completed): "
                           "the kernel may still write its buffer and will complete it";
  sim::detail::stop_run(what.c_str());
}

bool driver::has_completions() const noexcept {
  return refused_head_ != nullptr || endpoint_->has_ready(clock::now());
}

std::size_t driver::in_flight() const noexcept { return endpoint_->in_flight() + refused_; }

void driver::reap_all() {
  while (in_flight() > 0) {
    if (sim::io::world* w = sim::detail::io_world()) {
      w->cancel_all(*endpoint_);
      wake_others();
    }
    WEFT_ASSERT(endpoint_->in_flight() == 0 || endpoint_->has_scheduled());
    (void)deliver(true);
  }
}

}  // namespace weft::platform
