// weft/sim/oracles/run_return.hpp — oracle: event_loop::run() never returns while work from
// another thread that it accepted is unrun (event-loop.md, "When run() stops, and the close
// commit").
//
// Stated exactly: a remote submission (thread_handle::queue_macrotask, or a cross-thread spawn)
// whose call returned "accepted" before run() returned has run (its callback or its task's body
// began) by the time run() returns.
//
// Why the check is sound: producers report `accepted` right after the call returned, and the
// loop's thread calls `check_after_run` right after run() returned, with no scheduling point in
// between. So an item reported accepted at the check was pushed before run()'s last scheduling
// point, the unlock of its close commit. The push and the commit take the same inbox lock: had
// the push come first, the commit would have found it and failed, and run() would have gone on
// to run it. An item accepted but reported only after the check is not judged here (the
// producer may not have looked yet); the submission ledger still sees that it ran once.
//
// A checker only (see submissions.hpp for why its state is plain data).
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <map>
#include <string>

#include <weft/sim/context.hpp>

namespace weft::sim::oracles {

class run_return_ledger {
 public:
  explicit run_return_ledger(context& sim) : sim_(sim) {}

  void accepted(std::uint64_t id) { entries_[id].accepted = true; }
  void ran(std::uint64_t id) { entries_[id].ran = true; }

  // On the loop's thread, right after run() returned (`drive` numbers the call for the message).
  void check_after_run(std::uint64_t drive) {
    ++checks_;
    std::uint64_t unrun = 0;
    for (const auto& [id, e] : entries_) {
      if (!e.accepted || e.ran) continue;
      if (++unrun <= 3) {
        sim_.fail("run-return oracle: run() #" + std::to_string(drive) + " returned while submission " +
                  std::to_string(id) + ", accepted before it returned, had not run");
      }
    }
  }

  std::uint64_t checks() const noexcept { return checks_; }

 private:
  struct entry {
    bool accepted = false;
    bool ran = false;
  };
  context& sim_;
  std::map<std::uint64_t, entry> entries_;
  std::uint64_t checks_ = 0;
};

}  // namespace weft::sim::oracles
