// weft/io/process.hpp — child processes: spawn with pipes, wait through a pidfd, kill.
//
// wait() parks on the child's pidfd becoming readable (no SIGCHLD handler, no blocking thread),
// then reaps it. A child_process destroyed unwaited is killed (SIGKILL) and reaped at once (one
// destroyed on a thread that does not own its loop: by that loop, at its next turn), so no zombie
// outlives its object.
// The simulator does not simulate processes: spawn answers ENOSYS there.
#pragma once

#include <weft/compiler_support.hpp>

#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <weft/expected.hpp>
#include <weft/io/stream.hpp>
#include <weft/task.hpp>

namespace weft {

enum class stdio { inherit, pipe, null };

struct spawn_options {
  stdio in = stdio::inherit;
  stdio out = stdio::inherit;
  stdio err = stdio::inherit;
  std::optional<std::string> working_directory;
};

struct exit_status {
  int code = 0;     // the exit code, when the child exited
  int signal = 0;   // the signal that ended it, or 0
  bool success() const noexcept { return signal == 0 && code == 0; }
};

// A pipe end owned by the loop (the child's stdin, stdout or stderr).
class pipe_stream : public byte_stream {
 public:
  pipe_stream() = default;

 private:
  friend class child_process;
  explicit pipe_stream(detail::stream_ref core) noexcept : byte_stream(std::move(core)) {}
};

class child_process {
 public:
  child_process() = default;
  child_process(child_process&&) noexcept = default;
  child_process& operator=(child_process&&) noexcept;
  ~child_process();

  // Starts argv[0] (looked up in PATH) with `argv`. An empty argv is invalid_argument.
  static expected<child_process, std::error_code> spawn(const std::vector<std::string>& argv,
                                                        const spawn_options& options = {});

  // The parent's ends of the pipes asked for (closed when not).
  pipe_stream& stdin_pipe() noexcept { return in_; }
  pipe_stream& stdout_pipe() noexcept { return out_; }
  pipe_stream& stderr_pipe() noexcept { return err_; }

  int pid() const noexcept { return pid_; }
  // Waits for the child to end and reaps it (once; later calls answer the same status).
  task<expected<exit_status, std::error_code>> wait();
  // Sends `signal` (SIGTERM by default) to a child not yet reaped.
  expected<void, std::error_code> kill(int signal = 15);

 private:
  void reap_now() noexcept;

  detail::stream_ref pidfd_;  // the pidfd, closed with the object
  int pid_ = -1;
  std::optional<exit_status> status_;
  pipe_stream in_, out_, err_;
};

}  // namespace weft
