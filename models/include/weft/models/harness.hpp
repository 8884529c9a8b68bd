// weft/models/harness.hpp — runs a model's scenarios under Relacy with a fixed search budget and
// tells the suite whether the outcome was the expected one.
//
// Every model executable is built twice: against the production headers (it must pass: Relacy
// finds nothing in any search) and, per known-bad twin, against the production headers with one
// line mutated (it must fail: some search of some scenario reports the twin's expected result,
// e.g. DATA RACE). The expected outcome comes from the command line:
//
//   <model>                        every scenario, every search must report SUCCESS
//   <model> --expect=<result>      the first failure must be <result> (data_race, deadlock,
//                                  user_assert_failed, memory_leak, double_free, livelock,
//                                  access_to_freed_memory, any); no failure at all is an error
//
// Exit status: 0 when the outcome was the expected one, 1 otherwise (meson reads it).
// A failure prints Relacy's verdict, the failing iteration and the tail of its execution history,
// which names the production line (the seam passes weft::platform::source_location to Relacy).
#pragma once

#include <algorithm>
#include <chrono>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <weft/platform/model/relacy.hpp>

namespace weft::models {

// One search of a scenario. Relacy's random scheduler seeds iteration i with i, so a given budget
// always explores the same schedules: runs are repeatable, a failure reproduces.
struct search {
  rl::scheduler_type_e type;
  unsigned budget;  // random: iterations; context bound: the bound (that search runs to its end)

  static search random(unsigned iterations) { return {rl::sched_random, iterations}; }
  static search context_bound(unsigned bound) { return {rl::sched_bound, bound}; }
  static search full() { return {rl::sched_full, 0}; }
};

struct scenario {
  const char* name;
  rl::test_result_e (*run)(rl::test_params&);  // runs the Relacy test; returns its verdict
  std::vector<search> searches;
};

template <class Test>
rl::test_result_e run_test(rl::test_params& params) {
  rl::simulate<Test>(params);
  return params.test_result;
}

inline const char* result_name(rl::test_result_e r) {
  switch (r) {
    case rl::test_result_success: return "success";
    case rl::test_result_user_assert_failed: return "user_assert_failed";
    case rl::test_result_user_invariant_failed: return "user_invariant_failed";
    case rl::test_result_data_race: return "data_race";
    case rl::test_result_access_to_freed_memory: return "access_to_freed_memory";
    case rl::test_result_double_free: return "double_free";
    case rl::test_result_memory_leak: return "memory_leak";
    case rl::test_result_resource_leak: return "resource_leak";
    case rl::test_result_unitialized_access: return "uninitialized_access";
    case rl::test_result_deadlock: return "deadlock";
    case rl::test_result_livelock: return "livelock";
    default: return "other_failure";
  }
}

inline std::string describe(const search& s) {
  switch (s.type) {
    case rl::sched_random: return "random(" + std::to_string(s.budget) + " iterations)";
    case rl::sched_bound: return "context-bound(" + std::to_string(s.budget) + ")";
    case rl::sched_full: return "full";
    default: return "?";
  }
}

// Prints Relacy's verdict and the tail of the failing execution's history (its last entry is the
// failing operation, at its production call site). The per-thread repetition is cut.
inline void print_report(const std::string& report, std::size_t tail_lines) {
  std::vector<std::string_view> lines;
  std::string_view rest(report);
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    lines.push_back(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  std::size_t end = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("thread 0:")) {
      end = i;
      break;
    }
  }
  const std::size_t head = std::min<std::size_t>(4, end);  // test name, verdict, iteration
  for (std::size_t i = 0; i < head; ++i) std::cout << "    | " << lines[i] << '\n';
  const std::size_t from = std::max(head, end > tail_lines ? end - tail_lines : 0);
  if (from > head) std::cout << "    | ...\n";
  for (std::size_t i = from; i < end; ++i) std::cout << "    | " << lines[i] << '\n';
}

inline int run_model(const char* model, int argc, char** argv, std::initializer_list<scenario> scenarios) {
  std::string expect = "success";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--expect=")) {
      expect = std::string(arg.substr(9));
    } else {
      std::cerr << "usage: " << argv[0] << " [--expect=<relacy result>|any]\n";
      return 2;
    }
  }
  // Reports are named after the program (a model and each of its twins are separate programs,
  // possibly run in parallel).
  std::string program(argc > 0 ? argv[0] : model);
  if (const std::size_t slash = program.rfind('/'); slash != std::string::npos) program.erase(0, slash + 1);
  std::cout << "model " << model << " (" << program << "): expecting " << expect << '\n';
  const auto started = std::chrono::steady_clock::now();
  for (const scenario& sc : scenarios) {
    for (const search& s : sc.searches) {
      // Relacy's report goes to a file beside the test: a string stream would grow its buffer
      // while Relacy owns the heap (and Relacy would see a foreign pointer freed). The file's
      // buffer is allocated here, at open, before the simulation starts.
      const std::string log = program + "." + sc.name + ".relacy.log";
      rl::test_params params;
      std::ofstream report(log, std::ios::trunc);
      params.output_stream = &report;
      params.progress_stream = &report;
      params.search_type = s.type;
      if (s.type == rl::sched_random) params.iteration_count = s.budget;
      if (s.type == rl::sched_bound) params.context_bound = s.budget;
      const auto t0 = std::chrono::steady_clock::now();
      const rl::test_result_e result = sc.run(params);
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
      std::cout << "  " << sc.name << " / " << describe(s) << ": " << result_name(result) << " after "
                << params.stop_iteration << " iterations, " << ms << " ms" << std::endl;
      if (result == rl::test_result_success) continue;
      report.close();
      std::ifstream in(log);
      print_report(std::string(std::istreambuf_iterator<char>(in), {}), 14);
      std::cout << "    (full Relacy report: " << log << ")\n";
      if (expect == "success") {
        std::cout << "FAIL: Relacy rejected the production code\n";
        return 1;
      }
      if (expect == "any" || expect == result_name(result)) {
        std::cout << "ok: the known-bad twin was rejected as expected (" << result_name(result) << ")\n";
        return 0;
      }
      std::cout << "FAIL: the twin was rejected, but with " << result_name(result) << " instead of " << expect
                << '\n';
      return 1;
    }
  }
  const auto total =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (expect != "success") {
    std::cout << "FAIL: the known-bad twin passed every search (" << total << " ms): the model cannot see it\n";
    return 1;
  }
  std::cout << "ok: no failure found (" << total << " ms)\n";
  return 0;
}

}  // namespace weft::models
