// io_test_support.hpp — running I/O tests once per real driver.
#pragma once

#include <dirent.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>

#include <gtest/gtest.h>

#include <weft/event_loop.hpp>
#include <weft/platform/io_request.hpp>

namespace weft::io_test {

// A loop on the driver a test instance asks for; io_uring where the kernel lacks it is a
// visible skip (GTEST_SKIP with the reason), never a pass.
inline event_loop::options options_for(io_driver_choice choice) {
  event_loop::options o;
  o.io_driver = choice;
  return o;
}

class on_each_driver : public ::testing::TestWithParam<io_driver_choice> {
 protected:
  void SetUp() override {
    try {
      loop_ = std::make_unique<event_loop>(options_for(GetParam()));
    } catch (const io_unavailable_error& e) {
      GTEST_SKIP() << "io_uring unavailable on this machine: " << e.what();
    }
  }
  void TearDown() override { loop_.reset(); }
  event_loop& loop() { return *loop_; }

 private:
  std::unique_ptr<event_loop> loop_;
};

inline std::string driver_name(const ::testing::TestParamInfo<io_driver_choice>& info) {
  return to_string(info.param);
}

// Open descriptors of this process (the directory's own descriptor excluded).
inline std::size_t open_fds() {
  std::size_t n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

// How long a test waits for something that must happen, so that a defect fails the test instead of
// hanging it. Not a speed requirement: it is orders of magnitude above the expected time.
inline constexpr std::chrono::seconds guard{10};

inline std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span<const char>(s)); }

}  // namespace weft::io_test

// ASSERT_* returns from the function, which a coroutine cannot do: this one co_returns.
#define WEFT_CO_ASSERT(cond, message)                         \
  if (!(cond)) {                                               \
    ADD_FAILURE() << "failed: " #cond << ": " << message;      \
    co_return;                                                 \
  }
