// process.cpp — spawning children with pipes, and waiting on their pidfd.
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>

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
  if (!pidfd_ || pidfd_->fd < 0 || status_ || !pidfd_->owner.shared()->on_owner_thread()) return;
  platform::io_request r;
  r.opcode = platform::io_opcode::kill;
  r.fd = pidfd_->fd;
  r.flags = SIGKILL;
  (void)pidfd_->owner.shared()->driver.execute(r);
  siginfo_t info{};
  r = platform::io_request{};
  r.opcode = platform::io_opcode::waitid;
  r.fd = pidfd_->fd;
  r.data = &info;
  r.flags = wait_by_pidfd_flags;
  (void)pidfd_->owner.shared()->driver.execute(r);
  status_ = status_from(info);
}

expected<child_process, std::error_code> child_process::spawn(const std::vector<std::string>& argv,
                                                               const spawn_options& options) {
  if (argv.empty()) return unexpected(std::make_error_code(std::errc::invalid_argument));
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
    // Without a pidfd the child cannot be waited for without blocking the loop: refuse it.
    return unexpected(std::make_error_code(std::errc::function_not_supported));
  }
  return child;
}

task<expected<exit_status, std::error_code>> child_process::wait() {
  if (status_) co_return *status_;
  if (!pidfd_ || pidfd_->fd < 0) co_return unexpected(std::make_error_code(std::errc::bad_file_descriptor));
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
