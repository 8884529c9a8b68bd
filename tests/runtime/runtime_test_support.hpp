// tests/runtime/runtime_test_support.hpp — instruments for the multi-worker runtime tests.
//
//   flag           a one-shot signal between threads; waits are bounded by a generous limit so a
//                  broken runtime fails a test instead of hanging the suite;
//   wait_for_flag  a leaf that lets a task wait for a flag without blocking its worker;
//   on_worker()    the index of the worker running the caller (a task), checked;
//   usage_error_message  what a call's usage_error says.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>

#include "support.hpp"

namespace weft_test {

inline constexpr std::chrono::milliseconds generous = std::chrono::seconds(20);

class flag {
 public:
  void set() {
    {
      std::lock_guard<std::mutex> hold(lock_);
      set_ = true;
    }
    cv_.notify_all();
  }
  bool is_set() const {
    std::lock_guard<std::mutex> hold(lock_);
    return set_;
  }
  // True once set; false if `limit` passed first.
  bool wait(std::chrono::milliseconds limit = generous) const {
    std::unique_lock<std::mutex> hold(lock_);
    return cv_.wait_for(hold, limit, [this] { return set_; });
  }

 private:
  mutable std::mutex lock_;
  mutable std::condition_variable cv_;
  bool set_ = false;
};

// The worker index of the calling task (fails the test when called off a worker).
inline std::size_t on_worker() {
  weft::builtins* b = weft::builtins::try_current();
  EXPECT_NE(b, nullptr);
  return b ? b->worker().index : static_cast<std::size_t>(-1);
}

// The message of the usage_error `call` throws; fails the test and returns "" if it throws none.
template <class F>
std::string usage_error_message(F&& call) {
  try {
    call();
  } catch (const weft::usage_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no usage_error";
  return {};
}

}  // namespace weft_test
