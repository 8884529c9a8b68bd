// uring_backend.cpp — the io_uring backend: one ring per event loop, owned by the loop's thread.
//
// Invariants:
//   * Only the owner thread touches the ring, except through wake(), which either submits an
//     IORING_OP_MSG_RING from the *calling* thread's own small sender ring (wake_sender, one per
//     thread that drives a loop's ring, living as long as the thread) or, from any other thread,
//     writes the target's eventfd. The owner keeps one read of that eventfd armed,
//     so both forms leave a CQE, and a wake posted before the owner blocks is never lost.
//   * Every SQE the backend issues yields exactly one CQE (no multishot, no CQE skipping), and
//     `kernel_pending_` counts them. Operations in flight are not capped by the CQ's size (a cap
//     would let operations waiting for room block the ones in the kernel that wait on them): a
//     CQ that fills makes the kernel hold further CQEs (NODROP, required), and every reap checks
//     the overflow flag, flushes what the kernel holds and counts the event; none is lost.
//     An operation that finds no SQE (the kernel refused a submission, EBUSY while it holds
//     overflowed CQEs) waits in `backlog_`, in order, until the next reap.
//   * A user operation's CQE carries its address (tag 0); a CQE with a non-zero tag in its low
//     bits is the backend's own (wake read, cancel request, MSG_RING sent, readiness retry).
//   * complete() runs only in poll() / reap_all(), from a batch copied out of the CQ first, so a
//     completion that submits or cancels cannot disturb the iteration.
//   * Prepared SQEs reach the kernel at every poll() and before every wait, so I/O progresses on
//     a loop that never waits as on one that does.
#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <utility>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <liburing.h>

#include <weft/platform/assert.hpp>
#include <weft/platform/clock.hpp>

#include "backends.hpp"

namespace weft::platform {

namespace {

// Submission queue entries per ring, and completion queue entries: the CQ is sized for many
// operations in flight at once; beyond it the kernel holds completions (NODROP) until reaped.
constexpr unsigned ring_entries = 256;
constexpr unsigned cq_entries = 4096;
// CQEs copied out of the ring per batch in poll().
constexpr unsigned reap_batch = 64;

enum tag : std::uintptr_t {
  tag_operation = 0,   // user_data is the io_operation*
  tag_wake = 1,        // the eventfd read, or a MSG_RING received from another thread
  tag_cancel = 2,      // an ASYNC_CANCEL request's own CQE
  tag_readiness = 4,   // a POLL_ADD retrying an operation that met EAGAIN on a non-blocking fd
};
constexpr std::uintptr_t tag_mask = 7;
static_assert(alignof(io_operation) >= 8, "the low three bits of an operation's address carry tags");

std::uint64_t user_data(io_operation* op, tag t) { return reinterpret_cast<std::uintptr_t>(op) | t; }

// The opcodes weft submits; a kernel that lacks one gets the epoll backend instead.
constexpr io_uring_op required_opcodes[] = {
    IORING_OP_READ,     IORING_OP_WRITE,  IORING_OP_READV,     IORING_OP_WRITEV,   IORING_OP_RECV,
    IORING_OP_SEND,     IORING_OP_RECVMSG, IORING_OP_SENDMSG,  IORING_OP_ACCEPT,   IORING_OP_CONNECT,
    IORING_OP_POLL_ADD, IORING_OP_ASYNC_CANCEL, IORING_OP_OPENAT, IORING_OP_FSYNC, IORING_OP_STATX,
    IORING_OP_UNLINKAT, IORING_OP_RENAMEAT, IORING_OP_SHUTDOWN, IORING_OP_NOP,
};

// What the kernel's io_uring offers, probed once per process: opcode support cannot change under
// a running process.
struct kernel_support {
  bool usable = false;
  io_unavailable why = io_unavailable::kernel_lacks_io_uring;
  bool msg_ring = false;
  bool ftruncate = false;
};

io_unavailable reason_for(int err) {
  switch (err) {
    case ENOSYS: return io_unavailable::kernel_lacks_io_uring;
    case EPERM:
    case EACCES: return io_unavailable::not_permitted;
    default: return io_unavailable::resource_limit;
  }
}

const kernel_support& probe_kernel() {
  static const kernel_support support = [] {
    kernel_support s;
    io_uring ring;
    const int err = io_uring_queue_init(8, &ring, 0);
    if (err < 0) {
      s.why = reason_for(-err);
      return s;
    }
    constexpr unsigned needed_features = IORING_FEAT_NODROP | IORING_FEAT_EXT_ARG;
    io_uring_probe* probe = io_uring_get_probe_ring(&ring);
    bool all = probe != nullptr && (ring.features & needed_features) == needed_features;
    for (io_uring_op op : required_opcodes) {
      if (!all) break;
      all = io_uring_opcode_supported(probe, op) != 0;
    }
    if (probe != nullptr) {
      s.msg_ring = io_uring_opcode_supported(probe, IORING_OP_MSG_RING) != 0;
#ifdef IORING_OP_FTRUNCATE
      s.ftruncate = io_uring_opcode_supported(probe, IORING_OP_FTRUNCATE) != 0;
#endif
      io_uring_free_probe(probe);
    }
    io_uring_queue_exit(&ring);
    s.usable = all;
    if (!all) s.why = io_unavailable::missing_opcode;
    return s;
  }();
  return support;
}

// A small ring of the calling thread's own, from which it sends MSG_RING wakes to loops' rings.
// It lives as long as the thread (a loop's ring may be destroyed on any thread, so a pointer to
// "this thread's loop ring" could dangle; this one cannot).
class wake_sender {
 public:
  wake_sender() noexcept { ok_ = io_uring_queue_init(wake_sender_entries, &ring_, 0) == 0; }
  ~wake_sender() {
    if (ok_) io_uring_queue_exit(&ring_);
  }
  wake_sender(const wake_sender&) = delete;
  wake_sender& operator=(const wake_sender&) = delete;

  // False when the wake must go another way.
  bool send(int target_ring_fd, std::uint64_t data) noexcept {
    if (!ok_) return false;
    // The CQEs of earlier sends carry nothing we need: make room for this one's.
    io_uring_cq_advance(&ring_, io_uring_cq_ready(&ring_));
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return false;
    io_uring_prep_msg_ring(sqe, target_ring_fd, 0, data, 0);
    io_uring_sqe_set_data64(sqe, 0);
    return io_uring_submit(&ring_) == 1;
  }

 private:
  static constexpr unsigned wake_sender_entries = 8;
  io_uring ring_{};
  bool ok_ = false;
};

// Whether this thread drives a loop's ring (it polled one since it last destroyed one). Only such
// threads wake other loops through a sender ring of their own; any other thread (a host thread
// that spawns and joins, a blocking-pool thread) writes the target's eventfd. Destroying a loop
// closes the destroying thread's sender ring: a thread holds no descriptor of weft's once the
// loops it drove are gone (it opens a new one if it drives and wakes again).
constinit thread_local bool drives_a_ring = false;

// The thread's sender ring, made at its first wake; constant-initialised, so a loop destroyed by
// another thread_local's destructor at thread exit still finds it (closed, after the cleanup).
struct sender_slot {
  wake_sender* sender = nullptr;
  bool closed = false;  // the thread is exiting: no new sender ring
};
constinit thread_local sender_slot this_thread_slot{};

struct sender_cleanup {
  ~sender_cleanup() {
    delete std::exchange(this_thread_slot.sender, nullptr);
    this_thread_slot.closed = true;
  }
};

// Null when the thread is exiting or no ring could be allocated: the caller wakes another way.
wake_sender* this_thread_sender() noexcept {
  sender_slot& slot = this_thread_slot;
  if (slot.sender == nullptr && !slot.closed) {
    static thread_local sender_cleanup cleanup;  // closes the ring at thread exit
    (void)cleanup;
    slot.sender = new (std::nothrow) wake_sender();
  }
  return slot.sender;
}

void stop_driving_on_this_thread() noexcept {
  drives_a_ring = false;
  delete std::exchange(this_thread_slot.sender, nullptr);
}

// Where an operation is (io_operation::driver_slot).
enum stage : std::uintptr_t {
  stage_kernel = tag_operation,     // its SQE is issued
  stage_readiness = tag_readiness,  // its readiness poll is issued
  stage_backlog = 8,                // waiting for room in the CQ
  stage_done = 16,                  // finished without a CQE; result in driver_result
};

// An intrusive FIFO of operations over driver_next / driver_prev.
struct op_list {
  io_operation* head = nullptr;
  io_operation* tail = nullptr;
  void push(io_operation& op) noexcept {
    op.driver_next = nullptr;
    op.driver_prev = tail;
    (tail ? tail->driver_next : head) = &op;
    tail = &op;
  }
  void remove(io_operation& op) noexcept {
    (op.driver_prev ? op.driver_prev->driver_next : head) = op.driver_next;
    (op.driver_next ? op.driver_next->driver_prev : tail) = op.driver_prev;
    op.driver_next = op.driver_prev = nullptr;
  }
  io_operation* pop() noexcept {
    io_operation* op = head;
    if (op) remove(*op);
    return op;
  }
  bool empty() const noexcept { return head == nullptr; }
};

class uring_backend final : public driver_backend {
 public:
  uring_backend(const kernel_support& support, int* err) : support_(support) {
    io_uring_params params{};
    params.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_CQSIZE;
    params.cq_entries = cq_entries;
    int rc = io_uring_queue_init_params(ring_entries, &ring_, &params);
    if (rc == -EINVAL) {  // an older kernel without COOP_TASKRUN
      params = io_uring_params{};
      params.flags = IORING_SETUP_CQSIZE;
      params.cq_entries = cq_entries;
      rc = io_uring_queue_init_params(ring_entries, &ring_, &params);
    }
    if (rc < 0) {
      *err = -rc;
      return;
    }
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) {
      *err = errno;
      io_uring_queue_exit(&ring_);
      return;
    }
    ready_ = true;
    arm_wake_read();
  }

  ~uring_backend() override {
    if (!ready_) return;
    reap_all();
    stopping_ = true;
    // The wake read is the only SQE left; cancel it and wait it out so no CQE names freed memory.
    if (wake_read_armed_) issue_cancel(user_data(nullptr, tag_wake));
    while (kernel_pending_ > 0) {
      (void)io_uring_submit_and_wait(&ring_, 1);
      (void)reap();
    }
    io_uring_queue_exit(&ring_);
    ::close(wake_fd_);
    stop_driving_on_this_thread();
  }

  bool ok() const noexcept { return ready_; }

  void flush() override {
    if (io_uring_sq_ready(&ring_) > 0) (void)io_uring_submit(&ring_);
  }

  void block(std::optional<instant> deadline) override {
    io_uring_cqe* cqe = nullptr;
    if (!deadline) {
      (void)io_uring_submit_and_wait(&ring_, 1);
      return;
    }
    const duration left = *deadline - clock::now();
    if (left <= duration::zero()) {
      flush();
      return;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    __kernel_timespec ts{};
    ts.tv_sec = ns / 1'000'000'000;
    ts.tv_nsec = ns % 1'000'000'000;
    // With EXT_ARG (required), the timeout rides on the wait itself: no SQE, no CQE.
    (void)io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
  }

  void wake() noexcept override {
    if (support_.msg_ring && drives_a_ring) {
      wake_sender* sender = this_thread_sender();
      if (sender != nullptr && sender->send(ring_.ring_fd, user_data(nullptr, tag_wake))) return;
    }
    const std::uint64_t one = 1;
    // A failed write means the counter is already huge, which wakes the owner just the same.
    (void)!::write(wake_fd_, &one, sizeof one);
  }

  void submit(io_operation& op) override {
    ++in_flight_;
    if (backlog_.empty() && try_issue(op)) return;
    op.driver_slot = stage_backlog;
    backlog_.push(op);
  }

  void cancel(io_operation& op) override {
    switch (op.driver_slot) {
      case stage_backlog:  // it never reached the kernel
        backlog_.remove(op);
        finish_without_cqe(op, -ECANCELED);
        return;
      case stage_kernel:
      case stage_readiness: issue_cancel(user_data(&op, static_cast<tag>(op.driver_slot))); return;
      default: return;  // already finished: its completion is on the way
    }
  }

  std::int64_t execute(const io_request& r) override {
    if (r.opcode == io_opcode::close) cancel_on_descriptor(r.fd);
    return execute_now(r);
  }

  // Submits what is queued first: a loop that always has ready work never waits, and its SQEs
  // would otherwise never reach the kernel.
  std::size_t poll() override {
    drives_a_ring = true;
    flush();
    return reap();
  }

  bool has_completions() const noexcept override { return !done_.empty() || io_uring_cq_ready(&ring_) > 0; }
  std::size_t in_flight() const noexcept override { return in_flight_; }

  void reap_all() override {
    // Everything waiting for room is cancelled outright; everything in the kernel is asked to
    // stop, and each CQE is waited for: the kernel may write a buffer until its CQE arrives.
    while (io_operation* op = backlog_.pop()) finish_without_cqe(*op, -ECANCELED);
    for (io_operation* op = in_kernel_.head; op != nullptr; op = op->driver_next) {
      issue_cancel(user_data(op, static_cast<tag>(op->driver_slot)));
    }
    cancelling_all_ = true;
    while (in_flight_ > 0) {
      (void)reap();
      if (in_flight_ == 0) break;
      (void)io_uring_submit_and_wait(&ring_, 1);
    }
    cancelling_all_ = false;
  }

  io_backend kind() const noexcept override { return io_backend::io_uring; }
  std::uint64_t completion_overflows() const noexcept override { return overflows_; }

 private:

  io_uring_sqe* get_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      (void)io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void arm_wake_read() {
    io_uring_sqe* sqe = get_sqe();
    WEFT_ASSERT(sqe != nullptr);
    io_uring_prep_read(sqe, wake_fd_, &wake_count_, sizeof wake_count_, 0);
    io_uring_sqe_set_data64(sqe, user_data(nullptr, tag_wake));
    ++kernel_pending_;
    wake_read_armed_ = true;
  }

  void issue_cancel(std::uint64_t target) {
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return;  // the operation completes on its own; cancel is best effort
    io_uring_prep_cancel64(sqe, target, 0);
    io_uring_sqe_set_data64(sqe, user_data(nullptr, tag_cancel));
    ++kernel_pending_;
  }

  // Closing a descriptor does not stop the kernel's operations on it (the ring holds the file):
  // they are cancelled first, as the epoll backend does, so none waits on a closed object.
  void cancel_on_descriptor(int fd) {
    for (io_operation* op = backlog_.head; op != nullptr;) {
      io_operation* next = op->driver_next;
      if (op->fd == fd) {
        backlog_.remove(*op);
        finish_without_cqe(*op, -ECANCELED);
      }
      op = next;
    }
    bool any = false;
    for (io_operation* op = in_kernel_.head; op != nullptr && !any; op = op->driver_next) any = op->fd == fd;
    if (!any) return;
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return;
    io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, user_data(nullptr, tag_cancel));
    ++kernel_pending_;
    (void)io_uring_submit(&ring_);  // before the close: the kernel looks the descriptor up now
  }

  void finish_without_cqe(io_operation& op, std::int64_t result) {
    op.driver_result = result;
    op.driver_slot = stage_done;
    done_.push(op);
  }

  // Issues `op`, or finishes it inline (an ftruncate on a kernel without IORING_OP_FTRUNCATE).
  // False when there is no room now.
  bool try_issue(io_operation& op) {
    if (op.opcode == io_opcode::ftruncate && !support_.ftruncate) {
      finish_without_cqe(op, execute_now(op));
      return true;
    }
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return false;
    prepare(sqe, op);
    issue(sqe, op, tag_operation);
    return true;
  }

  void issue(io_uring_sqe* sqe, io_operation& op, tag t) {
    io_uring_sqe_set_data64(sqe, user_data(&op, t));
    op.driver_slot = t;
    in_kernel_.push(op);
    ++kernel_pending_;
  }

  static void prepare(io_uring_sqe* sqe, const io_request& r) {
    // io_uring reads offset -1 as "the file's current position".
    const __u64 off = r.offset == io_offset_current ? static_cast<__u64>(-1) : r.offset;
    switch (r.opcode) {
      case io_opcode::nop: io_uring_prep_nop(sqe); break;
      case io_opcode::read: io_uring_prep_read(sqe, r.fd, r.data, static_cast<unsigned>(r.size), off); break;
      case io_opcode::write:
        ignore_sigpipe_before_writes();
        io_uring_prep_write(sqe, r.fd, r.data, static_cast<unsigned>(r.size), off);
        break;
      case io_opcode::readv:
        io_uring_prep_readv(sqe, r.fd, static_cast<const iovec*>(r.data), static_cast<unsigned>(r.size), off);
        break;
      case io_opcode::writev:
        ignore_sigpipe_before_writes();
        io_uring_prep_writev(sqe, r.fd, static_cast<const iovec*>(r.data), static_cast<unsigned>(r.size), off);
        break;
      case io_opcode::recv: io_uring_prep_recv(sqe, r.fd, r.data, r.size, r.flags); break;
      case io_opcode::send: io_uring_prep_send(sqe, r.fd, r.data, r.size, r.flags | MSG_NOSIGNAL); break;
      case io_opcode::recvmsg:
        io_uring_prep_recvmsg(sqe, r.fd, static_cast<msghdr*>(r.data), static_cast<unsigned>(r.flags));
        break;
      case io_opcode::sendmsg:
        io_uring_prep_sendmsg(sqe, r.fd, static_cast<const msghdr*>(r.data),
                              static_cast<unsigned>(r.flags | MSG_NOSIGNAL));
        break;
      case io_opcode::accept: io_uring_prep_accept(sqe, r.fd, r.addr, r.addr_len, r.flags); break;
      case io_opcode::connect: io_uring_prep_connect(sqe, r.fd, r.addr, r.addr_size); break;
      case io_opcode::poll: io_uring_prep_poll_add(sqe, r.fd, static_cast<unsigned>(r.flags)); break;
      case io_opcode::openat: io_uring_prep_openat(sqe, r.dirfd, r.path, r.flags, r.mode); break;
      case io_opcode::fsync:
        io_uring_prep_fsync(sqe, r.fd, (r.flags & io_fsync_data_only) != 0 ? IORING_FSYNC_DATASYNC : 0);
        break;
      case io_opcode::statx:
        io_uring_prep_statx(sqe, r.dirfd, r.path, r.flags, r.mode, static_cast<struct statx*>(r.data));
        break;
#ifdef IORING_OP_FTRUNCATE
      case io_opcode::ftruncate: io_uring_prep_rw(IORING_OP_FTRUNCATE, sqe, r.fd, nullptr, 0, r.offset); break;
#endif
      case io_opcode::unlinkat: io_uring_prep_unlinkat(sqe, r.dirfd, r.path, r.flags); break;
      case io_opcode::renameat: io_uring_prep_renameat(sqe, r.dirfd, r.path, r.dirfd, r.path2, 0); break;
      case io_opcode::shutdown: io_uring_prep_shutdown(sqe, r.fd, r.flags); break;
      default:
        // Control calls are execute()-only; submitting one is a programming error above the seam.
        WEFT_ASSERT(false && "control opcode submitted");
        io_uring_prep_nop(sqe);
        break;
    }
  }

  // Copies CQEs out in batches, then acts on them; returns how many user operations completed.
  std::size_t reap() {
    std::size_t delivered = 0;
    for (;;) {
      if (io_uring_cq_has_overflow(&ring_)) {
        ++overflows_;  // the kernel holds them (NODROP): flush them into the CQ, lose none
        (void)io_uring_get_events(&ring_);
      }
      io_uring_cqe* cqes[reap_batch];
      const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, reap_batch);
      struct event {
        std::uint64_t data;
        std::int32_t res;
      } events[reap_batch];
      for (unsigned i = 0; i < n; ++i) events[i] = {cqes[i]->user_data, cqes[i]->res};
      io_uring_cq_advance(&ring_, n);
      for (unsigned i = 0; i < n; ++i) delivered += handle(events[i].data, events[i].res);
      delivered += deliver_done();
      refill_from_backlog();
      if (n < reap_batch) break;
    }
    return delivered;
  }

  std::size_t handle(std::uint64_t data, std::int32_t res) {
    const auto t = static_cast<tag>(data & tag_mask);
    auto* op = reinterpret_cast<io_operation*>(static_cast<std::uintptr_t>(data & ~std::uint64_t{tag_mask}));
    if (t == tag_wake && res == 0) return 0;  // a MSG_RING from another thread: not ours to count
    WEFT_ASSERT(kernel_pending_ > 0);
    --kernel_pending_;
    switch (t) {
      case tag_operation:
      case tag_readiness: {
        in_kernel_.remove(*op);
        if (!cancelling_all_ && !stopping_) {
          if (t == tag_operation && res == -EAGAIN && moves_bytes(op->opcode)) {
            // A non-blocking fd: wait for readiness, then issue the operation again.
            if (io_uring_sqe* sqe = get_sqe()) {
              io_uring_prep_poll_add(sqe, op->fd, writes_bytes(op->opcode) ? POLLOUT : POLLIN);
              issue(sqe, *op, tag_readiness);
              return 0;
            }
          }
          if (t == tag_readiness && res >= 0) {
            if (io_uring_sqe* sqe = get_sqe()) {
              prepare(sqe, *op);
              issue(sqe, *op, tag_operation);
              return 0;
            }
          }
        }
        const std::int64_t result = (t == tag_readiness && res >= 0) ? -ECANCELED : res;
        op->driver_slot = stage_done;
        --in_flight_;
        op->complete(result);
        return 1;
      }
      case tag_wake:
        // The eventfd read finished (8 bytes) or failed: re-arm it unless the ring is closing.
        wake_read_armed_ = false;
        if (!stopping_) arm_wake_read();
        return 0;
      default: return 0;  // a cancel request's own CQE
    }
  }

  std::size_t deliver_done() {
    std::size_t delivered = 0;
    while (io_operation* op = done_.pop()) {
      --in_flight_;
      ++delivered;
      op->complete(op->driver_result);
    }
    return delivered;
  }

  void refill_from_backlog() {
    while (io_operation* op = backlog_.head) {
      backlog_.remove(*op);
      if (!try_issue(*op)) {
        // No room yet: put it back in front, keeping submission order.
        op->driver_next = backlog_.head;
        op->driver_prev = nullptr;
        (backlog_.head ? backlog_.head->driver_prev : backlog_.tail) = op;
        backlog_.head = op;
        return;
      }
    }
  }

  const kernel_support& support_;
  io_uring ring_{};
  bool ready_ = false;
  int wake_fd_ = -1;
  std::uint64_t wake_count_ = 0;  // the eventfd read's target
  bool wake_read_armed_ = false;
  bool stopping_ = false;
  bool cancelling_all_ = false;
  unsigned kernel_pending_ = 0;   // SQEs issued whose CQE has not been reaped
  std::size_t in_flight_ = 0;     // user operations submitted and not yet completed
  std::uint64_t overflows_ = 0;
  op_list backlog_;    // submitted, waiting for CQ room
  op_list in_kernel_;  // issued (operation or readiness stage)
  op_list done_;       // finished without a CQE
};

}  // namespace

std::unique_ptr<driver_backend> make_uring_backend(io_unavailable* why) {
  const kernel_support& support = probe_kernel();
  if (!support.usable) {
    *why = support.why;
    return nullptr;
  }
  int err = 0;
  auto backend = std::make_unique<uring_backend>(support, &err);
  if (!backend->ok()) {
    *why = reason_for(err);
    return nullptr;
  }
  return backend;
}

}  // namespace weft::platform
