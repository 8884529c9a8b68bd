// cli_support.hpp — running the weft-sim CLI from a test: the built binary (WEFT_SIM_BIN) through
// the shell, or cli_main in process over the test binary's own scenarios.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/sim/scenario.hpp>

namespace weft::sim::testing {

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

// cli_main in this process (`args` with the program name first), its stdout captured.
inline output in_process(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  output out;
  out.status = weft::sim::cli_main(static_cast<int>(argv.size()), argv.data());
  out.text = ::testing::internal::GetCapturedStdout();
  return out;
}

}  // namespace weft::sim::testing
