// runner.cpp — where runs execute: one simulator OS thread per calling thread, reused.
//
// Why a separate OS thread: a run that ends in deadlock or livelock leaves fibers that can never
// finish (they are blocked inside production code; unwinding them would run through noexcept
// frames). Boost.Fiber's per-thread scheduler waits for every fiber when its thread exits, so a
// thread that carries such fibers must never exit. The simulator thread keeps running later seeds
// (the abandoned fibers are simply never scheduled again); when its owner goes away it is
// detached and left blocked, and the process exit reclaims it. Each abandoned run leaks its
// fibers' stacks and heap objects — bounded by the number of deadlocked/livelocked seeds.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <weft/sim/context.hpp>
#include <weft/sim/engine.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace weft::sim {

namespace {

struct job_slot {
  std::mutex lock;
  std::condition_variable cv;
  std::function<void()> job;
  bool has_job = false;
  bool done = false;
  bool stop = false;
};

class simulator_thread {
 public:
  simulator_thread() : slot_(new job_slot), thread_([s = slot_] { serve(s); }) {}
  ~simulator_thread() {
    if (poisoned_) {
      thread_.detach();  // carries abandoned fibers: must not exit; slot_ is leaked on purpose
      return;
    }
    {
      std::lock_guard<std::mutex> hold(slot_->lock);
      slot_->stop = true;
    }
    slot_->cv.notify_all();
    thread_.join();
    delete slot_;
  }
  simulator_thread(const simulator_thread&) = delete;
  simulator_thread& operator=(const simulator_thread&) = delete;

  void execute(std::function<void()> job) {
    std::unique_lock<std::mutex> hold(slot_->lock);
    slot_->job = std::move(job);
    slot_->has_job = true;
    slot_->done = false;
    slot_->cv.notify_all();
    slot_->cv.wait(hold, [this] { return slot_->done; });
  }
  void mark_poisoned() noexcept { poisoned_ = true; }

 private:
  static void serve(job_slot* s) {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> hold(s->lock);
        s->cv.wait(hold, [s] { return s->has_job || s->stop; });
        if (s->stop) return;
        job = std::move(s->job);
        s->has_job = false;
      }
      job();
      {
        std::lock_guard<std::mutex> hold(s->lock);
        s->done = true;
      }
      s->cv.notify_all();
    }
  }

  job_slot* slot_;
  std::thread thread_;  // seam-ok: simulator host code, outside any simulated run
  bool poisoned_ = false;
};

thread_local std::unique_ptr<simulator_thread> local_simulator;

}  // namespace

run_result run(const scenario& s, std::uint64_t seed, const options& o) {
  validate(s, o);  // before any simulator thread exists: a bad option throws in the caller
  if (!local_simulator) local_simulator = std::make_unique<simulator_thread>();
  run_result result;
  bool poisoned = false;
  local_simulator->execute([&] {
    engine e(seed, o);
    context ctx(e, seed, e.opts(), s);
    e.execute([&ctx, &s] {
      s.body(ctx);
      ctx.end_of_scenario();
    });
    poisoned = e.poisoned();
    result = std::move(e).result();
  });
  if (poisoned) local_simulator->mark_poisoned();
  return result;
}

}  // namespace weft::sim
