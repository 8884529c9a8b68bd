// Detection power: for every known-bad variant of the runtime's source
// (sim/tests/variants/*.variant, built into weft-sim-variant-<name> by variants/meson.build),
// `fuzz` over seeds 0..N-1 finds the bug within the variant's stated number of seeds, the
// failure is the expected kind, the printed replay command reproduces it, and the same command
// on the production weft-sim passes (the failure is the variant's bug, not the scenario's).
//
// The binaries are run as a user would run them (a shell command, stdout captured).
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <sys/wait.h>

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

struct variant_spec {
  std::string scenario;
  std::uint64_t seeds = 0;
  std::string expect;
  std::string fuzz_args;  // optional `fuzz-args:` (extra flags for the campaign)
};

variant_spec read_spec(const std::string& name) {
  const std::string path = env_or_empty("WEFT_SIM_VARIANTS_DIR") + "/" + name + ".variant";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    fields[line.substr(0, colon)] = value;
  }
  variant_spec s;
  s.scenario = fields["scenario"];
  s.seeds = std::stoull(fields["seeds"].empty() ? "0" : fields["seeds"]);
  s.expect = fields["expect"];
  s.fuzz_args = fields["fuzz-args"];
  return s;
}

struct command_result {
  int status = -1;
  std::string out;
};

command_result run_command(const std::string& command) {
  command_result r;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) r.out.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// The value after `key` on the first line that starts with `prefix`.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

void expect_found(const std::string& name) {
  const std::string bin = env_or_empty(("WEFT_SIM_VARIANT_" + [&] {
                                         std::string up = name;
                                         for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                                         return up;
                                       }())
                                           .c_str());
  const std::string production = env_or_empty("WEFT_SIM_BIN");
  ASSERT_FALSE(bin.empty()) << "variant binary not given to the test";
  ASSERT_FALSE(production.empty());
  const variant_spec spec = read_spec(name);
  ASSERT_FALSE(spec.scenario.empty());
  ASSERT_GT(spec.seeds, 0u);

  // 1. The campaign finds it within the stated number of seeds.
  const command_result fuzz = run_command(bin + " fuzz --scenario " + spec.scenario + " --seeds " +
                                          std::to_string(spec.seeds) + " --jobs 1 --max-failures 1 " + spec.fuzz_args);
  const std::string fail_line = line_starting(fuzz.out, "fail: seed=");
  ASSERT_FALSE(fail_line.empty()) << name << ": not found in " << spec.seeds << " seeds\n" << fuzz.out;
  const std::uint64_t seed = std::stoull(fail_line);
  const std::string why = fail_line.substr(fail_line.find(':') + 2);
  EXPECT_NE(why.find(spec.expect), std::string::npos) << name << ": expected a '" << spec.expect << "' failure, got: " << why;
  std::printf("detection: %s found by %s at seed %llu (%llu seeds to detection): %s\n", name.c_str(),
              spec.scenario.c_str(), static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed + 1),
              why.c_str());

  // 2. The printed replay reproduces it.
  const std::string replay = line_starting(fuzz.out, "  replay: ");
  ASSERT_FALSE(replay.empty()) << fuzz.out;
  ASSERT_EQ(replay.rfind(bin, 0), 0u) << "the replay command names another binary: " << replay;
  const command_result again = run_command(replay);
  EXPECT_EQ(again.status, 1) << again.out;
  EXPECT_NE(again.out.find("outcome: fail"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find(why.substr(0, why.find('\n'))), std::string::npos)
      << "the replay failed differently:\n" << again.out;

  // 3. The production runtime passes the very same run.
  const command_result control = run_command(production + replay.substr(bin.size()));
  EXPECT_EQ(control.status, 0) << control.out;
  EXPECT_NE(control.out.find("outcome: pass"), std::string::npos) << control.out;
}

TEST(detection_power, an_inbox_that_accepts_after_its_close_strands_work_and_shutdown_race_finds_it) {
  expect_found("inbox_accepts_after_close");
}
TEST(detection_power, an_inbox_that_drains_newest_first_breaks_producer_fifo_in_local_domain_dispatch) {
  expect_found("inbox_newest_first");
}
TEST(detection_power, a_waker_that_resumes_instead_of_scheduling_is_found_by_cross_worker_ping_pong) {
  expect_found("wake_resumes_inline");
}
TEST(detection_power, a_blocking_callback_that_runs_after_its_submission_was_rejected_is_found) {
  expect_found("blocking_runs_rejected");
}
TEST(detection_power, a_refused_spawn_whose_task_runs_anyway_is_found_by_inbox_overflow) {
  expect_found("abandon_runs_task");
}
TEST(detection_power, a_remote_wake_queued_as_a_macrotask_is_found_by_remote_wake_order) {
  expect_found("remote_wake_as_macrotask");
}
TEST(detection_power, an_abort_that_destroys_the_frame_on_the_aborting_thread_is_found_by_abort_race) {
  expect_found("abort_destroys_on_caller");
}
TEST(detection_power, an_abort_that_overwrites_a_finished_tasks_value_is_found_by_the_outcome_ledger) {
  expect_found("abort_overwrites_finished");
}
TEST(detection_power, an_abort_lost_while_a_poll_is_queued_is_found_by_abort_race) {
  expect_found("abort_lost_when_scheduled");
}
TEST(detection_power, a_run_n_that_runs_one_turn_too_many_is_found_by_local_domain_dispatch) {
  expect_found("run_n_one_extra_turn");
}
TEST(detection_power, a_close_commit_that_ignores_queued_items_is_found_by_inbox_overflow) {
  expect_found("run_returns_with_inbox_items");
}
TEST(detection_power, a_lost_unpark_is_found_by_shutdown_race_as_a_deadlock) { expect_found("parker_lost_unpark"); }
TEST(detection_power, a_stop_that_closes_admission_last_admits_work_the_admission_oracle_refuses) {
  expect_found("stop_closes_admission_late");
}
TEST(detection_power, a_drain_that_waits_before_closing_admission_is_found_by_drain_race) {
  expect_found("drain_waits_before_closing");
}
TEST(detection_power, a_drain_that_reads_its_deadline_as_absolute_is_found_by_the_deadline_check) {
  expect_found("drain_deadline_absolute");
}
TEST(detection_power, a_shutdown_that_leaves_inbox_spawns_uncounted_is_found_by_the_stop_report_oracle) {
  expect_found("shutdown_uncounted_spawns");
}
TEST(detection_power, a_blocking_pool_one_thread_over_capacity_is_found_by_blocking_saturation) {
  expect_found("blocking_over_capacity");
}
TEST(detection_power, a_blocking_pool_queueing_one_over_capacity_is_found_by_blocking_saturation) {
  expect_found("blocking_queue_over");
}
TEST(detection_power, a_spawn_everywhere_that_skips_the_last_worker_is_found_by_placement_race) {
  expect_found("everywhere_skips_last_worker");
}
TEST(detection_power, an_input_relocated_on_the_submitting_thread_is_found_by_placement_race) {
  expect_found("relocate_on_submitter");
}
TEST(detection_power, a_timer_heap_sift_up_comparing_the_wrong_way_is_found_by_the_timer_order_oracle) {
  expect_found("timer_sift_up_inverted");
}
TEST(detection_power, timer_entries_without_their_arming_sequence_break_ties_and_the_order_oracle_sees_it) {
  expect_found("timer_entry_unsequenced");
}
TEST(detection_power, a_timeout_that_leaves_its_task_running_is_found_by_the_timeout_oracle) {
  expect_found("timeout_abort_inverted");
}
TEST(detection_power, a_stop_that_joins_only_the_first_blocking_pool_is_found_by_blocking_saturation) {
  expect_found("stop_joins_first_pool");
}
TEST(detection_power, an_abandoned_blocking_job_that_still_runs_is_found_by_blocking_saturation) {
  expect_found("abandon_keeps_job_queued");
}
TEST(detection_power, a_moved_from_join_handle_that_keeps_its_outcome_is_found_by_wake_storm) {
  expect_found("join_move_empties_only_live");
}
TEST(detection_power, a_join_handle_that_keeps_its_first_waker_deadlocks_wake_storm) {
  expect_found("join_keeps_first_waker");
}
TEST(detection_power, an_abandoned_io_operation_freed_in_flight_is_found_by_the_buffer_lifetime_oracle) {
  expect_found("io_abandon_frees_in_flight");
}
TEST(detection_power, a_dropped_read_that_loses_its_bytes_is_found_by_io_cancel_race) {
  expect_found("io_dropped_read_loses_bytes");
}
TEST(detection_power, a_read_that_overtakes_the_read_in_flight_is_found_by_io_cancel_race) {
  expect_found("io_second_read_overtakes");
}

}  // namespace
TEST(detection_power, a_pool_selector_that_never_chooses_background_is_found_by_the_priority_share_oracle) {
  expect_found("pool_selector_skips_background");
}
TEST(detection_power, a_pool_overflow_that_drops_the_task_deadlocks_steal_imbalance) {
  expect_found("pool_overflow_drops_task");
}
TEST(detection_power, a_worker_overflow_that_loses_a_yielding_task_deadlocks_steal_imbalance) {
  expect_found("pool_overflow_loses_task");
}
TEST(detection_power, a_pool_park_without_its_queue_recheck_strands_a_submission_in_idle_wake) {
  expect_found("pool_park_skips_recheck");
}
TEST(detection_power, a_pool_stop_that_cancels_nothing_deadlocks_pool_shutdown) {
  expect_found("pool_stop_skips_cancel");
}
TEST(detection_power, a_pool_worker_that_ignores_its_local_burst_limit_is_found_by_injector_fairness) {
  expect_found("pool_burst_ignores_injector");
}
