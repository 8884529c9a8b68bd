// tests/runtime/support.hpp — small instruments shared by the runtime tests.
//
//   recording_sink   a telemetry sink that keeps every event (thread-safe), so tests can count
//                    what the loop reported;
//   gate / gate_leaf an owner-thread leaf that counts its polls and opens on demand;
//   remote_gate      the same, opened and woken from any thread;
//   drop_probe       counts how often (and on which thread) a value was destroyed;
//   thread_id()      the seam's id of the calling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include <weft/platform/thread.hpp>
#include <weft/weft.hpp>

namespace weft_test {

inline std::uint64_t thread_id() { return weft::platform::current_thread_id(); }

// ---- telemetry ----------------------------------------------------------------------------------

struct recorded_event {
  weft::telemetry_kind kind;
  std::string message;
  std::uint64_t count;
  std::exception_ptr exception;
};

class recording_sink final : public weft::telemetry_sink {
 public:
  void record(const weft::telemetry_event& event) noexcept override {
    std::lock_guard<std::mutex> hold(lock_);
    events_.push_back(recorded_event{event.kind, std::string(event.message), event.count, event.exception});
  }
  std::vector<recorded_event> events_of(weft::telemetry_kind kind) const {
    std::lock_guard<std::mutex> hold(lock_);
    std::vector<recorded_event> out;
    for (const auto& e : events_) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
  std::size_t count_of(weft::telemetry_kind kind) const { return events_of(kind).size(); }
  std::size_t total() const {
    std::lock_guard<std::mutex> hold(lock_);
    return events_.size();
  }

 private:
  mutable std::mutex lock_;
  std::vector<recorded_event> events_;
};

// A loop whose telemetry goes to `sink`.
inline weft::event_loop::options with_sink(const std::shared_ptr<recording_sink>& sink,
                                           std::size_t inbox_capacity = weft::event_loop::default_inbox_capacity) {
  weft::event_loop::options opts;
  opts.inbox_capacity = inbox_capacity;
  opts.telemetry = sink;
  return opts;
}

// The message of the std::exception inside `e` ("" if it is something else).
inline std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "";
  }
}

// ---- leaves ---------------------------------------------------------------------------------------

// Owner-thread state of a leaf: counts polls, keeps the last waker, opens when told.
struct gate {
  bool open = false;
  int polls = 0;
  weft::waker waiter;
};

struct gate_leaf {
  gate* g;
  bool poll_ready(const weft::waker& w) {
    ++g->polls;
    if (g->open) return true;
    g->waiter = w;
    return false;
  }
  void await_resume() const noexcept {}
};

// Thread-safe variant: open() and wake() may come from any thread.
class remote_gate {
 public:
  bool poll_ready(const weft::waker& w) {
    polls_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> hold(lock_);
    if (open_) return true;
    waiter_ = w;
    return false;
  }
  // Opens the gate and wakes the waiter (if it registered one already) through a clone, used up
  // by the wake when `by_value` (waker::wake() &&).
  void open_and_wake(bool by_value = false) {
    weft::waker w;
    {
      std::lock_guard<std::mutex> hold(lock_);
      open_ = true;
      w = waiter_;
    }
    if (by_value) {
      std::move(w).wake();
    } else {
      w.wake();
    }
  }
  weft::waker waiter() const {
    std::lock_guard<std::mutex> hold(lock_);
    return waiter_;
  }
  bool has_waiter() const {
    std::lock_guard<std::mutex> hold(lock_);
    return waiter_.valid();
  }
  int polls() const { return polls_.load(std::memory_order_relaxed); }

  // The awaitable view (a leaf is taken by reference by co_await).
  struct leaf {
    remote_gate* g;
    bool poll_ready(const weft::waker& w) { return g->poll_ready(w); }
    void await_resume() const noexcept {}
  };
  leaf wait() { return leaf{this}; }

 private:
  mutable std::mutex lock_;
  bool open_ = false;
  weft::waker waiter_;
  std::atomic<int> polls_{0};
};

// ---- destruction probes ---------------------------------------------------------------------------

// Shared record of how many times probes were destroyed (moved-from probes do not count), and
// on which thread the last one was.
struct drop_record {
  std::atomic<int> drops{0};
  std::atomic<std::uint64_t> last_thread{0};
};

class drop_probe {
 public:
  explicit drop_probe(drop_record* r) noexcept : r_(r) {}
  drop_probe(drop_probe&& other) noexcept : r_(std::exchange(other.r_, nullptr)) {}
  drop_probe(const drop_probe&) = delete;
  drop_probe& operator=(const drop_probe&) = delete;
  drop_probe& operator=(drop_probe&&) = delete;
  ~drop_probe() {
    if (r_ != nullptr) {
      r_->last_thread.store(thread_id(), std::memory_order_relaxed);
      r_->drops.fetch_add(1, std::memory_order_release);
    }
  }

 private:
  drop_record* r_;
};

// Spins (with yields) until pred() or the deadline; returns pred().
template <class P>
bool eventually(P pred, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return pred();
    std::this_thread::yield();
  }
  return true;
}

}  // namespace weft_test
