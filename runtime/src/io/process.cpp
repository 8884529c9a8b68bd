// process.cpp — spawning children with pipes, and waiting on their pidfd.
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>

#include <weft/detail/runnable.hpp>
#include <weft/io/process.hpp>
#include <weft/io/readiness.hpp>

namespace weft {

namespace {

// What waitid waits for: the child's end.
constexpr int wait_by_pidfd_flags = WEXITED;

exit_status status_from(const siginfo_t& info) {
  exit_status s;
  if (info.si_code == CLD_EXITED) {
    s.code = info.si_status;
  } else {
    s.signal = info.si_status;
  }
  return s;
}

// Kills the child and waits for its end (a SIGKILLed child ends at once). Through the pidfd's
// driver, on the owner thread or, once that loop is gone, on whichever thread disposes of it.
std::optional<exit_status> kill_and_reap(detail::stream_core& pidfd) noexcept {
  platform::driver& driver = pidfd.owner.shared()->driver;
  platform::io_request r;
  r.opcode = platform::io_opcode::kill;
  r.fd = pidfd.fd;
  r.flags = SIGKILL;
  (void)driver.execute(r);
  siginfo_t info{};
  r = platform::io_request{};
  r.opcode = platform::io_opcode::waitid;
  r.fd = pidfd.fd;
  r.data = &info;
  r.flags = wait_by_pidfd_flags;
  if (driver.execute(r) < 0) return std::nullopt;  // reaped already, by a wait()
  return status_from(info);
}

// A child_process destroyed (or assigned over) on a thread that does not own its loop: the kill
// and the reap run on the owner's loop, which then drops the pidfd's reference (as a stream's
// core does, stream_core::drop). Discarded (the loop is gone), they run on the discarding thread.
class reap_runnable final : public detail::runnable {
 public:
  explicit reap_runnable(detail::stream_core* pidfd) noexcept
      : runnable(detail::runnable_kind::callback), pidfd_(pidfd) {}
  void run() override { finish(); }
  void discard() noexcept override { finish(); }

 private:
  void finish() noexcept {
    if (pidfd_->fd >= 0) (void)kill_and_reap(*pidfd_);
    pidfd_->release();
    delete this;
  }
  detail::stream_core* pidfd_;
};

}  // namespace

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    reap_now();
    pidfd_ = std::move(other.pidfd_);
    pid_ = std::exchange(other.pid_, -1);
    status_ = other.status_;
    in_ = std::move(other.in_);
    out_ = std::move(other.out_);
    err_ = std::move(other.err_);
  }
  return *this;
}

child_process::~child_process() { reap_now(); }

void child_process::reap_now() noexcept {
  if (!pidfd_ || status_ || !pidfd_->owner.valid()) return;
  // The thread first: the core's descriptor is the owner thread's to read.
  if (!pidfd_->owner.on_owner_thread()) {
    detail::stream_core* core = pidfd_.detach();
    core->owner.post(new reap_runnable(core));
    return;
  }
  if (pidfd_->fd < 0) return;
  status_ = kill_and_reap(*pidfd_.get());
}

expected<child_process, std::error_code> child_process::spawn(const std::vector<std::string>& argv,
                                                               const spawn_options& options) {
  if (argv.empty()) return unexpected(std::make_error_code(std::errc::invalid_argument));  // weft's own check
  detail::io_owner owner = detail::io_owner::current("child_process::spawn");
  const stdio modes[3] = {options.in, options.out, options.err};
  int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  int child_fds[3] = {-1, -1, -1};
  int parent_fds[3] = {-1, -1, -1};
  auto close_all = [&] {
    for (int i = 0; i < 3; ++i) {
      detail::close_descriptor(owner, child_fds[i]);
      detail::close_descriptor(owner, parent_fds[i]);
    }
  };
  for (int i = 0; i < 3; ++i) {
    platform::io_request r;
    if (modes[i] == stdio::pipe) {
      r.opcode = platform::io_opcode::pipe;
      r.data = pipes[i];
      r.flags = O_CLOEXEC;
      if (auto rc = detail::execute_control(owner, r, "child_process::spawn"); rc < 0) {
        close_all();
        return unexpected(detail::io_error_code(rc));
      }
      // stdin: the child reads (fds[0]); stdout/stderr: the child writes (fds[1]).
      child_fds[i] = pipes[i][i == 0 ? 0 : 1];
      parent_fds[i] = pipes[i][i == 0 ? 1 : 0];
    } else if (modes[i] == stdio::null) {
      r.opcode = platform::io_opcode::openat;
      r.path = "/dev/null";
      r.flags = (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC;
      const std::int64_t fd = detail::execute_control(owner, r, "child_process::spawn");
      if (fd < 0) {
        close_all();
        return unexpected(detail::io_error_code(fd));
      }
      child_fds[i] = static_cast<int>(fd);
    }
  }
  std::vector<const char*> args;
  for (const std::string& a : argv) args.push_back(a.c_str());
  args.push_back(nullptr);
  int pidfd = -1;
  platform::spawn_request s;
  s.argv = args.data();
  s.working_directory = options.working_directory ? options.working_directory->c_str() : nullptr;
  s.stdin_fd = child_fds[0];
  s.stdout_fd = child_fds[1];
  s.stderr_fd = child_fds[2];
  s.pidfd_out = &pidfd;
  platform::io_request r;
  r.opcode = platform::io_opcode::spawn;
  r.data = &s;
  const std::int64_t pid = detail::execute_control(owner, r, "child_process::spawn");
  for (int& fd : child_fds) detail::close_descriptor(owner, std::exchange(fd, -1));
  if (pid < 0) {
    close_all();
    return unexpected(detail::io_error_code(pid));
  }
  child_process child;
  child.pid_ = static_cast<int>(pid);
  child.pidfd_ = detail::stream_ref(new detail::stream_core(owner, pidfd, false));
  auto adopt = [&](int fd) { return pipe_stream(detail::stream_ref(new detail::stream_core(owner, fd, false))); };
  if (parent_fds[0] >= 0) child.in_ = adopt(parent_fds[0]);
  if (parent_fds[1] >= 0) child.out_ = adopt(parent_fds[1]);
  if (parent_fds[2] >= 0) child.err_ = adopt(parent_fds[2]);
  if (pidfd < 0) {
    // A driver that started a child without a pidfd (the real one kills and reaps such a child
    // and fails the spawn itself): it could not be waited for without blocking the loop.
    return unexpected(detail::io_error_code(-ENOSYS));
  }
  return child;
}

task<expected<exit_status, std::error_code>> child_process::wait() {
  if (status_) co_return *status_;
  if (!pidfd_ || pidfd_->fd < 0) co_return unexpected(detail::io_error_code(-EBADF));
  auto ready = co_await wait_readable(pidfd_->fd);
  if (status_) co_return *status_;  // another wait reaped the child meanwhile
  if (!ready) co_return unexpected(ready.error());
  siginfo_t info{};
  platform::io_request r;
  r.opcode = platform::io_opcode::waitid;
  r.fd = pidfd_->fd;
  r.data = &info;
  r.flags = wait_by_pidfd_flags | WNOHANG;
  if (auto rc = detail::execute_control(pidfd_->owner, r, "child_process::wait"); rc < 0) co_return unexpected(detail::io_error_code(rc));
  status_ = status_from(info);
  co_return *status_;
}

expected<void, std::error_code> child_process::kill(int signal) {
  if (status_) return unexpected(detail::io_error_code(-ESRCH));
  if (!pidfd_ || pidfd_->fd < 0) return unexpected(detail::io_error_code(-EBADF));
  platform::io_request r;
  r.opcode = platform::io_opcode::kill;
  r.fd = pidfd_->fd;
  r.flags = signal;
  if (auto rc = detail::execute_control(pidfd_->owner, r, "child_process::kill"); rc < 0) return unexpected(detail::io_error_code(rc));
  return {};
}

}  // namespace weft
