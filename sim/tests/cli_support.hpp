// cli_support.hpp — running the built weft-sim (WEFT_SIM_BIN) from a test through the shell, or
// the CLI in this process over the scenarios linked into the test binary (the test-only ones too).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <weft/sim/scenario.hpp>

namespace weft::sim::testing {

// weft-sim's exit statuses (docs/simulator.md, "Exit status").
inline constexpr int exit_pass = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_io = 3;
inline constexpr int exit_unknown_scenario = 4;
inline constexpr int exit_unknown_knob = 5;
inline constexpr int exit_foreign_record = 6;
inline constexpr int exit_bad_record = 7;

struct output {
  std::string text;
  int status = -1;  // the exit status; -1 when the process did not exit (a signal)
};

// Runs `command` with /bin/sh; `text` is what the command writes to its stdout (append
// " 2>&1" to include stderr, " 2>&1 >/dev/null" for stderr alone).
inline output shell_raw(const std::string& command) {
  output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out.text += buf;
  const int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// stdout and stderr together.
inline output shell(const std::string& command) { return shell_raw(command + " 2>&1"); }

inline std::string binary() {
  const char* path = std::getenv("WEFT_SIM_BIN");
  return path != nullptr ? path : "";
}

struct cli_output {
  std::string out;  // stdout
  std::string err;  // stderr
  int status = -1;  // cli_main's return: the exit status main() would give
};

namespace detail {
inline std::string read_all(FILE* f) {
  std::string text;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}
}  // namespace detail

// weft::sim::cli_main(args) in this process, its stdout and stderr captured.
inline cli_output cli(std::vector<std::string> args) {
  args.insert(args.begin(), "weft-sim");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  FILE* out_file = std::tmpfile();
  FILE* err_file = std::tmpfile();
  if (out_file == nullptr || err_file == nullptr) return {};
  const int saved_out = ::dup(STDOUT_FILENO);
  const int saved_err = ::dup(STDERR_FILENO);
  ::dup2(::fileno(out_file), STDOUT_FILENO);
  ::dup2(::fileno(err_file), STDERR_FILENO);
  cli_output r;
  r.status = weft::sim::cli_main(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  ::close(saved_out);
  ::close(saved_err);
  r.out = detail::read_all(out_file);
  r.err = detail::read_all(err_file);
  return r;
}

}  // namespace weft::sim::testing
