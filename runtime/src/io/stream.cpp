// stream.cpp — byte-stream reads and writes through staging buffers, and their orphans.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include <weft/detail/runnable.hpp>
#include <weft/io/stream.hpp>
#include <weft/join_error.hpp>

namespace weft::detail {

// ---- the core -----------------------------------------------------------------------------

void stream_core::close() noexcept {
  if (fd >= 0) close_descriptor(owner, std::exchange(fd, -1));
  // Connections a listener kept for dropped accepts are nobody's now.
  for (int kept : std::exchange(accepted, {})) close_descriptor(owner, kept);
}

stream_core::~stream_core() { close(); }

void stream_core::check_owner_thread() const {
  (void)owner.driver("an I/O object's operation or copy");
}

namespace {
// A core reference dropped off the owner thread, released on the owner's loop.
class core_drop_runnable final : public runnable {
 public:
  core_drop_runnable(stream_core* core, bool close_first) noexcept
      : runnable(runnable_kind::callback), core_(core), close_first_(close_first) {}
  void run() override { finish(); }
  void discard() noexcept override { finish(); }

 private:
  void finish() noexcept {
    if (close_first_) core_->close();
    core_->release();
    delete this;
  }
  stream_core* core_;
  bool close_first_;
};
}  // namespace

void stream_core::drop(stream_core* core, bool close_first) noexcept {
  if (!core->owner.valid() || core->owner.on_owner_thread()) {
    if (close_first) core->close();
    core->release();
    return;
  }
  core->owner.post(new core_drop_runnable(core, close_first));
}

std::size_t stream_core::take_overflow(std::byte* dst, std::size_t size) noexcept {
  const std::size_t n = std::min(size, overflow.size() - overflow_pos);
  if (n > 0) std::memcpy(dst, overflow.data() + overflow_pos, n);  // dst may be null when size is 0
  overflow_pos += n;
  if (overflow_pos == overflow.size()) {
    overflow.clear();
    overflow_pos = 0;
  }
  return n;
}

// ---- reads --------------------------------------------------------------------------------

class read_op final : public staged_op {
 public:
  read_op(stream_core* core, std::size_t size) : staged_op(size), core_(core) {
    opcode = core->socket ? platform::io_opcode::recv : platform::io_opcode::read;
    fd = core->fd;
    data = staging.get();
    this->size = size;
  }
  // The leaf was dropped: the core keeps the operation until it completes.
  void orphan() noexcept { core_->ref_for_orphan(); }

 private:
  // Bytes that arrived for a reader who has gone (before or after it went) are kept for the
  // next read.
  // An error it met is kept too (the kernel reports a reset once); its own cancellation is not
  // the stream's error, and an end of stream is seen again by the next read.
  static void keep(stream_core* core, const std::byte* bytes, std::int64_t result) {
    if (result < 0) {
      if (result != -ECANCELED && core->read_error == 0) core->read_error = result;
      return;
    }
    core->overflow.insert(core->overflow.end(), bytes, bytes + result);
  }
  void orphaned(std::int64_t result) noexcept override {
    try {
      keep(core_, staging.get(), result);
    } catch (...) {
      // No memory to keep them: the stream can no longer promise its bytes; fail it instead.
      core_->close();
    }
    core_->finish_read();
    core_->release();
  }
  stream_core* core_;
};

stream_read_leaf::stream_read_leaf(stream_read_leaf&& other) noexcept
    : core_(std::move(other.core_)),
      dst_(other.dst_),
      op_(std::exchange(other.op_, nullptr)),
      result_(other.result_),
      done_(other.done_) {}

bool stream_read_leaf::poll_ready(const waker& w) {
  if (done_) return true;
  if (op_ != nullptr) {
    if (op_->handoff.ready()) return true;
    if (!op_->waiter.will_wake(w)) op_->waiter = w;
    return false;
  }
  stream_core* core = core_.get();
  if (core == nullptr) {
    result_ = -EBADF;
    return done_ = true;
  }
  platform::driver& d = core->owner.driver("byte_stream::read");
  if (core->has_overflow()) {
    result_ = static_cast<std::int64_t>(core->take_overflow(dst_.data(), dst_.size()));
    return done_ = true;
  }
  if (core->reading != nullptr) {  // another read is in flight: its bytes come first
    core->read_waiters.add(w);
    return false;
  }
  if (core->read_error != 0) {  // a dropped read's error, after the bytes it kept
    result_ = std::exchange(core->read_error, 0);
    return done_ = true;
  }
  if (core->fd < 0 || dst_.empty()) {
    result_ = core->fd < 0 ? -EBADF : 0;
    return done_ = true;
  }
  op_ = new read_op(core, std::min(dst_.size(), io_staging_max));
  op_->waiter = w;
  d.submit(*op_);
  core->reading = op_;
  return false;
}

expected<std::size_t, std::error_code> stream_read_leaf::await_resume() {
  if (op_ != nullptr) {
    result_ = op_->handoff.result();
    if (result_ > 0) std::memcpy(dst_.data(), op_->staging.get(), static_cast<std::size_t>(result_));
    std::exchange(op_, nullptr)->destroy();
    core_->finish_read();
    done_ = true;
    result_ = core_->result_after_close(result_);
  }
  if (result_ < 0) return unexpected(io_error_code(result_));
  return static_cast<std::size_t>(result_);
}

// Dropped after submission: whether the result already came (it was never taken) or is still to
// come, orphaned() keeps its bytes for the next read.
stream_read_leaf::~stream_read_leaf() {
  read_op* op = std::exchange(op_, nullptr);
  if (op == nullptr) return;
  op->orphan();
  op->abandon(core_->owner.shared()->driver);
}

// ---- writes -------------------------------------------------------------------------------

class write_op final : public staged_op {
 public:
  write_op(stream_core* core, std::size_t size) : staged_op(size), core_(core) {
    opcode = core->socket ? platform::io_opcode::send : platform::io_opcode::write;
    fd = core->fd;
    data = staging.get();
    this->size = size;
  }
  void orphan() noexcept { core_->ref_for_orphan(); }

 private:
  void orphaned(std::int64_t) noexcept override {
    core_->finish_write();
    core_->release();
  }
  stream_core* core_;
};

stream_write_leaf::stream_write_leaf(stream_ref core, std::span<const iovec> chunks) : core_(std::move(core)) {
  if (!core_ || core_->fd < 0) {
    result_ = -EBADF;
    done_ = true;
    return;
  }
  std::size_t total = 0;
  for (const iovec& c : chunks) total += c.iov_len;
  total = std::min(total, io_staging_max);
  if (total == 0) {
    done_ = true;
    return;
  }
  op_ = new write_op(core_.get(), total);
  std::size_t at = 0;
  for (const iovec& c : chunks) {
    const std::size_t n = std::min(c.iov_len, total - at);
    if (n > 0) std::memcpy(op_->staging.get() + at, c.iov_base, n);  // an empty chunk's base may be null
    at += n;
    if (at == total) break;
  }
}

stream_write_leaf::stream_write_leaf(stream_write_leaf&& other) noexcept
    : core_(std::move(other.core_)),
      op_(std::exchange(other.op_, nullptr)),
      result_(other.result_),
      submitted_(std::exchange(other.submitted_, false)),
      done_(other.done_) {}

bool stream_write_leaf::poll_ready(const waker& w) {
  if (done_) return true;
  if (submitted_) {
    if (op_->handoff.ready()) return true;
    if (!op_->waiter.will_wake(w)) op_->waiter = w;
    return false;
  }
  stream_core* core = core_.get();
  platform::driver& d = core->owner.driver("byte_stream::write");
  if (core->writing != nullptr) {  // another write is in flight: keep the order
    core->write_waiters.add(w);
    return false;
  }
  if (core->fd < 0) {
    result_ = -EBADF;
    std::exchange(op_, nullptr)->destroy();
    return done_ = true;
  }
  op_->fd = core->fd;
  op_->waiter = w;
  d.submit(*op_);
  core->writing = op_;
  submitted_ = true;
  return false;
}

expected<std::size_t, std::error_code> stream_write_leaf::await_resume() {
  if (op_ != nullptr) {
    result_ = op_->handoff.result();
    std::exchange(op_, nullptr)->destroy();
    if (submitted_) core_->finish_write();
    done_ = true;
    result_ = core_->result_after_close(result_);
  }
  if (result_ < 0) return unexpected(io_error_code(result_));
  return static_cast<std::size_t>(result_);
}

stream_write_leaf::~stream_write_leaf() {
  write_op* op = std::exchange(op_, nullptr);
  if (op == nullptr) return;
  if (!submitted_) {
    op->destroy();
    return;
  }
  op->orphan();
  op->abandon(core_->owner.shared()->driver);
}

}  // namespace weft::detail

namespace weft {

detail::stream_read_leaf byte_stream::read(std::span<std::byte> dst) { return {core_, dst}; }

detail::stream_write_leaf byte_stream::write(std::span<const std::byte> src) {
  const iovec one{const_cast<std::byte*>(src.data()), src.size()};
  return {core_, std::span<const iovec>(&one, 1)};
}

detail::stream_write_leaf byte_stream::writev(std::span<const std::span<const std::byte>> chunks) {
  constexpr std::size_t chunks_max = 64;  // more are written by later calls, as writev may do
  iovec vec[chunks_max];
  const std::size_t n = std::min(chunks.size(), chunks_max);
  for (std::size_t i = 0; i < n; ++i) vec[i] = iovec{const_cast<std::byte*>(chunks[i].data()), chunks[i].size()};
  return {core_, std::span<const iovec>(vec, n)};
}

void byte_stream::close() noexcept {
  core_.close();
}

}  // namespace weft
