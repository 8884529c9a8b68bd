// blocking_pool_model.cpp — Relacy model of the blocking pool's admission vs shutdown protocol:
// weft::detail::blocking_admission (detail/blocking_admission.hpp), the class blocking_pool.cpp
// runs its submit / thread loop / close through, compiled against the model flavor of the seam.
// The model cannot start threads, so the pool's thread start is a stub that records the start;
// a Relacy thread declared by the model plays the started thread and runs serve(), the loop the
// pool's threads run. Limits shrink: one thread, one waiting job (production: 16 and 1,024).
//
// Invariants:
//   * each job is either accepted (and then run exactly once, or discarded exactly once by the
//     close, which counts it) or refused with `full` / `closed` (discarded, never run);
//   * nothing is accepted once close() returned: later submissions answer `closed`;
//   * the bound: the jobs waiting beyond the idle and starting threads never exceed max_queued,
//     and `full` is answered only when that bound is reached (the first two jobs always find a
//     taker: the started thread, starting, idle or running the first);
//   * the shared state (queue and counts) is only touched under the lock (it is a sync::cell:
//     Relacy reports a DATA RACE otherwise).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <weft/detail/blocking_admission.hpp>
#include <weft/models/harness.hpp>
#include <weft/platform/thread.hpp>

namespace {

using weft::queue_error;
using weft::submit_result;
using weft::detail::blocking_admission;
using weft::detail::runnable;
using weft::detail::runnable_kind;

constexpr std::size_t max_threads = 1;  // production: 16
constexpr std::size_t max_queued = 1;   // production: 1,024

// A job the model owns (statically, in the test) that counts what happened to it. The counts
// are plain ints: the checker runs every Relacy thread on one OS thread and reads them in after().
struct job final : runnable {
  job() noexcept : runnable(runnable_kind::callback) {}
  void run() override { ++runs; }
  void discard() noexcept override { ++discards; }
  int runs = 0;
  int discards = 0;
};

enum class answer { none, accepted, full, closed };

answer answer_of(const submit_result& r) {
  if (r) return answer::accepted;
  return r.error() == queue_error::closed ? answer::closed : answer::full;
}

// The pool, its stubbed thread start and the Relacy thread that plays the started pool thread.
struct pool_under_model {
  blocking_admission pool{max_threads, max_queued};
  weft::sync::atomic<bool> started{false};
  weft::sync::atomic<bool> close_returned{false};

  answer submit(job& j) {
    // Read before submitting: if close() had returned, the answer must be `closed`.
    const bool was_closed = close_returned.load(std::memory_order_acquire);
    const answer a = answer_of(pool.submit(&j, [this](std::vector<weft::platform::thread>& threads) {
      threads.emplace_back();  // the model's pool thread (a placeholder: it cannot be started)
      // release: the pool thread reads it with acquire, then takes the lock in serve().
      started.store(true, std::memory_order_release);
    }));
    if (was_closed) RL_ASSERT(a == answer::closed);
    RL_ASSERT(pool.waiting() <= max_queued);
    return a;
  }

  std::uint64_t close() {
    const std::uint64_t discarded = pool.close();
    close_returned.store(true, std::memory_order_release);  // pairs with the acquires above
    return discarded;
  }

  // The pool thread: it runs serve() once a submission started it; if none did before the close
  // returned, none will (submissions answer `closed` from then on).
  void pool_thread() {
    while (!started.load(std::memory_order_acquire) && !close_returned.load(std::memory_order_acquire)) {
      weft::platform::yield_thread();
    }
    if (started.load(std::memory_order_acquire)) pool.serve();
  }
};

// Checks each job's fate against its answer; returns how many accepted jobs were discarded.
std::uint64_t check_fates(const job* jobs, const answer* answers, std::size_t n) {
  std::uint64_t discarded_accepted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const job& j = jobs[i];
    RL_ASSERT(answers[i] != answer::none);
    if (answers[i] == answer::accepted) {
      RL_ASSERT(j.runs + j.discards == 1);  // run exactly once or discarded exactly once
      if (j.discards == 1) ++discarded_accepted;
    } else {
      RL_ASSERT(j.runs == 0);  // refused: never run
      RL_ASSERT(j.discards == 1);
    }
  }
  return discarded_accepted;
}

// Three threads: a submitter (three jobs into a pool of one thread and one waiting slot), the
// closer, and the pool thread.
struct admit_vs_close : rl::test_suite<admit_vs_close, 3> {
  pool_under_model m;
  job jobs[3];
  answer answers[3] = {answer::none, answer::none, answer::none};
  std::uint64_t discarded = 0;

  void thread(unsigned index) {
    if (index == 0) {
      for (std::size_t i = 0; i < 3; ++i) answers[i] = m.submit(jobs[i]);
      // Two jobs always fit (the started thread takes one, one may wait): `full` only for a third.
      RL_ASSERT(answers[0] != answer::full);
      RL_ASSERT(answers[1] != answer::full);
    } else if (index == 1) {
      discarded = m.close();
    } else {
      m.pool_thread();
    }
  }

  void after() {
    RL_ASSERT(check_fates(jobs, answers, 3) == discarded);  // close() counts what it discarded
  }
};

// Three threads: two submitters (two jobs each), the first of which then closes the pool, and the
// pool thread. Checks the bound under concurrent admissions and the close racing a submitter.
struct two_submitters : rl::test_suite<two_submitters, 3> {
  pool_under_model m;
  job jobs[4];
  answer answers[4] = {answer::none, answer::none, answer::none, answer::none};
  std::uint64_t discarded = 0;

  void thread(unsigned index) {
    if (index == 0) {
      answers[0] = m.submit(jobs[0]);
      answers[1] = m.submit(jobs[1]);
      discarded = m.close();
      RL_ASSERT(m.submit(jobs[2]) == answer::closed);
      answers[2] = answer::closed;
    } else if (index == 1) {
      answers[3] = m.submit(jobs[3]);
    } else {
      m.pool_thread();
    }
  }

  void after() { RL_ASSERT(check_fates(jobs, answers, 4) == discarded); }
};

}  // namespace

int main(int argc, char** argv) {
  using weft::models::run_test;
  using weft::models::search;
  return weft::models::run_model(
      "blocking_pool", argc, argv,
      {
          {"admit_vs_close", &run_test<admit_vs_close>, {search::context_bound(2), search::random(100000)}},
          {"two_submitters", &run_test<two_submitters>, {search::context_bound(2), search::random(100000)}},
      });
}
