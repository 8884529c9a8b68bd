// disk_crash_test.cpp — context::crash_disk: a file keeps what its last fsync made durable, plus a
// seeded number of leading sectors of what was written since. A log that acknowledges a record
// only after syncing it loses nothing acknowledged; one that acknowledges before syncing is
// caught, and so is a correct one on a device whose fsync lies; a full disk fails a growing write;
// a crash with a file still open is a usage error naming the line.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/sim/check.hpp>
#include <weft/weft.hpp>

namespace {

using weft::sim::check;
using weft::sim::check_result;

constexpr std::size_t record_bytes = 700;  // spans sector boundaries
constexpr int records = 6;
const std::string log_path = "/log";

std::vector<std::byte> record(int i) { return std::vector<std::byte>(record_bytes, static_cast<std::byte>('a' + i)); }

// Appends the records, acknowledging each after its sync (or, when `ack_before_sync`, before it;
// the last record is then never synced at all). Returns how many were acknowledged.
weft::task<int> append_records(weft::sim::context* sim, bool ack_before_sync) {
  int acked = 0;
  auto f = co_await weft::file::open(log_path, weft::open_options{.read = false, .write = true, .create = true});
  if (!f) co_return 0;
  for (int i = 0; i < records; ++i) {
    const auto bytes = record(i);
    std::size_t done = 0;
    while (done < bytes.size()) {
      auto w = co_await f->write_at(std::span<const std::byte>(bytes).subspan(done), i * record_bytes + done);
      if (!w || *w == 0) co_return acked;
      done += *w;
    }
    if (ack_before_sync) {
      ++acked;
      if (i + 1 < records && !sim->chance(1, 2)) continue;  // syncs now and then, not for every ack
      if (i + 1 == records) break;
    }
    if (!co_await f->sync_data()) co_return acked;
    if (!ack_before_sync) ++acked;
  }
  co_return acked;
}

weft::task<void> check_recovery(weft::sim::context* sim, int acked) {
  auto contents = co_await weft::file::read_all(log_path);
  if (!contents) {
    sim->fail("the log is gone after the crash");
    co_return;
  }
  for (int i = 0; i < acked; ++i) {
    const auto want = record(i);
    const std::size_t at = static_cast<std::size_t>(i) * record_bytes;
    if (contents->size() < at + record_bytes || !std::equal(want.begin(), want.end(), contents->begin() + at)) {
      sim->fail("an acknowledged record was lost or torn by the crash");
      co_return;
    }
  }
}

void log_service(weft::sim::context& sim, bool ack_before_sync) {
  int acked = 0;
  {
    weft::event_loop loop;
    acked = loop.block_on(append_records(&sim, ack_before_sync));  // the file closes with the task
  }
  sim.crash_disk();
  weft::event_loop restarted;
  restarted.block_on(check_recovery(&sim, acked));
}

TEST(disk_crash, a_log_that_syncs_before_it_acknowledges_loses_nothing_acknowledged) {
  const check_result r = check({.seeds = 200}, [](weft::sim::context& sim) { log_service(sim, false); });
  EXPECT_TRUE(r.passed) << r.message();
}

TEST(disk_crash, a_log_that_acknowledges_before_syncing_is_caught) {
  const check_result r =
      check({.seeds = 200, .shrink = false}, [](weft::sim::context& sim) { log_service(sim, true); });
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.failures.front(), "an acknowledged record was lost or torn by the crash");
}

// What a crash leaves of a file written in three sectors and never synced, over many seeds: none,
// some and all of its sectors each occur, and nothing but whole leading sectors.
TEST(disk_crash, unsynced_writes_are_torn_at_sector_boundaries) {
  std::vector<std::size_t> sizes;
  const check_result r = check({.seeds = 64}, [&](weft::sim::context& sim) {
    weft::event_loop loop;
    loop.block_on([](weft::sim::context* sim, std::vector<std::size_t>* sizes) -> weft::task<void> {
      {
        auto f = co_await weft::file::open("/torn", weft::open_options{.read = false, .write = true, .create = true});
        const std::vector<std::byte> bytes(3 * 512, std::byte{7});
        std::size_t done = 0;
        while (done < bytes.size()) {
          auto w = co_await f->write_at(std::span<const std::byte>(bytes).subspan(done), done);
          if (!w) co_return;
          done += *w;
        }
      }
      sim->crash_disk();
      auto left = co_await weft::file::read_all("/torn");
      if (!left) {
        sim->fail("a name was lost: names are durable at once");
        co_return;
      }
      sizes->push_back(left->size());
    }(&sim, &sizes));
  });
  ASSERT_TRUE(r.passed) << r.message();
  ASSERT_EQ(sizes.size(), 64u);
  for (std::size_t n : sizes) EXPECT_EQ(n % 512, 0u) << n;
  for (std::size_t want : {0u, 512u, 1024u, 1536u}) {
    EXPECT_NE(std::find(sizes.begin(), sizes.end(), want), sizes.end()) << "no crash left " << want << " bytes";
  }
}

weft::sim::options with_fault(weft::platform::fault f) {
  weft::sim::options o;
  o.faults.rate_ppm[static_cast<std::size_t>(f)] = weft::sim::ppm_one;
  return o;
}

TEST(disk_crash, a_lying_fsync_loses_what_a_correct_log_acknowledged) {
  const check_result r = check({.seeds = 50, .sim = with_fault(weft::platform::fault::fsync_lies), .shrink = false},
                               [](weft::sim::context& sim) { log_service(sim, false); });
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.failures.front(), "an acknowledged record was lost or torn by the crash");
}

TEST(disk_crash, a_swarm_mix_never_makes_fsync_lie) {
  weft::sim::options swarm;
  swarm.swarm = true;
  bool other_kind_picked = false;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    const weft::sim::options o = weft::sim::resolve(swarm, seed);
    EXPECT_EQ(o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::fsync_lies)], 0u) << "seed " << seed;
    other_kind_picked |= o.faults.rate_ppm[static_cast<std::size_t>(weft::platform::fault::io_no_space)] != 0;
  }
  EXPECT_TRUE(other_kind_picked);
}

TEST(disk_crash, a_full_disk_fails_a_growing_write_with_enospc) {
  int error = 0;
  const check_result r = check({.seeds = 1, .sim = with_fault(weft::platform::fault::io_no_space)},
                               [&](weft::sim::context&) {
                                 weft::event_loop loop;
                                 error = loop.block_on([]() -> weft::task<int> {
                                   auto f = co_await weft::file::open(
                                       "/full", weft::open_options{.read = false, .write = true, .create = true});
                                   if (!f) co_return -1;
                                   const std::vector<std::byte> bytes(16, std::byte{1});
                                   auto w = co_await f->write_at(bytes, 0);
                                   co_return w ? 0 : w.error().value();
                                 }());
                               });
  ASSERT_TRUE(r.passed) << r.message();
  EXPECT_EQ(error, ENOSPC);
}

TEST(disk_crash, a_crash_with_a_file_open_fails_naming_the_line) {
  const check_result r = check({.seeds = 1, .shrink = false}, [](weft::sim::context& sim) {
    weft::event_loop loop;
    loop.block_on([](weft::sim::context* sim) -> weft::task<void> {
      auto f = co_await weft::file::open("/held", weft::open_options{.read = false, .write = true, .create = true});
      sim->crash_disk();
    }(&sim));
  });
  ASSERT_FALSE(r.passed);
  EXPECT_NE(r.failures.front().find("crash_disk with 1 files open (at "), std::string::npos) << r.failures.front();
  EXPECT_NE(r.failures.front().find("disk_crash_test.cpp:"), std::string::npos) << r.failures.front();
}

}  // namespace
