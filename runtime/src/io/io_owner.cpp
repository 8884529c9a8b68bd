// io_owner.cpp — which loop an I/O object belongs to, and closing its descriptor.
#include <string>

#include <weft/detail/runnable.hpp>
#include <weft/event_loop.hpp>
#include <weft/io/detail/io_op.hpp>

namespace weft::detail {

io_owner io_owner::current(const char* what) {
  event_loop* loop = event_loop::current();
  if (loop == nullptr) {
    throw usage_error(std::string(what) + ": I/O objects are created inside a weft task or a driven event loop");
  }
  return io_owner(loop->shared());
}

platform::driver& io_owner::driver(const char* what) const {
  if (shared_ == nullptr) throw usage_error(std::string(what) + " on a closed or moved-from I/O object");
  if (!shared_->on_owner_thread()) {
    throw usage_error(std::string(what) + " called off the thread of the loop that owns the object");
  }
  return shared_->driver;
}

void io_owner::post(runnable* item) const noexcept {
  loop_shared* shared = shared_;  // `this` may go with the item (a core the loop releases)
  shared->submit_internal(item);  // which holds the loop's shared part until its notify returns
}

std::int64_t execute_control(const io_owner& owner, const platform::io_request& r, const char* what) {
  return owner.driver(what).execute(r);
}

namespace {
// A close posted to the owner loop from another thread. Discarded (the loop is gone), it closes
// on the discarding thread: nothing on the loop uses the descriptor any more.
class close_runnable final : public runnable {
 public:
  close_runnable(loop_shared* shared, int fd) noexcept : runnable(runnable_kind::callback), shared_(shared), fd_(fd) {
    shared_->ref_inc();
  }
  void run() override { finish(); }
  void discard() noexcept override { finish(); }

 private:
  void finish() noexcept {
    platform::io_request r;
    r.opcode = platform::io_opcode::close;
    r.fd = fd_;
    (void)shared_->driver.execute(r);
    shared_->release();
    delete this;
  }
  loop_shared* shared_;
  int fd_;
};
}  // namespace

void close_descriptor(const io_owner& owner, int fd) noexcept {
  if (fd < 0 || !owner.valid()) return;
  loop_shared* shared = owner.shared();
  if (shared->on_owner_thread()) {
    platform::io_request r;
    r.opcode = platform::io_opcode::close;
    r.fd = fd;
    (void)shared->driver.execute(r);
    return;
  }
  owner.post(new close_runnable(shared, fd));
}

}  // namespace weft::detail
