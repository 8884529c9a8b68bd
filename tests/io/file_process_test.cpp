// file_process_test.cpp — files, raw-descriptor readiness, Unix pairs and child processes on each
// real driver.
#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <sys/uio.h>
#include <poll.h>
#include <csignal>
#include <optional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <vector>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include <weft/io.hpp>
#include <weft/time.hpp>

#include "io_test_support.hpp"

namespace weft {
namespace {

using io_test::bytes_of;

class file_io : public io_test::on_each_driver {};

// SIGPIPE's disposition when the process started, before any test wrote anything.
bool sigpipe_default_at_start() {
  static const bool at_start = [] {
    struct sigaction now{};
    return ::sigaction(SIGPIPE, nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL;
  }();
  return at_start;
}
// Read during static initialisation, before main and any test.
[[maybe_unused]] const bool sigpipe_recorded = sigpipe_default_at_start();

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "weft-" + name + "-" + std::to_string(::getpid());
}

TEST_P(file_io, writes_reads_sizes_syncs_truncates_renames_and_removes) {
  const std::string path = temp_path("file");
  const std::string moved = path + ".moved";
  loop().block_on([&]() -> task<void> {
    open_options o;
    o.write = true;
    o.create = true;
    o.truncate = true;
    auto f = co_await file::open(path, o);
    WEFT_CO_ASSERT(f, f.error().message())
    auto w = co_await f->write(bytes_of("hello file"));
    WEFT_CO_ASSERT(w, w.error().message())
    EXPECT_EQ(*w, 10u);
    auto w2 = co_await f->write_at(bytes_of("F"), 6);
    WEFT_CO_ASSERT(w2, "")
    WEFT_CO_ASSERT(co_await f->sync_all(), "")
    WEFT_CO_ASSERT(co_await f->sync_data(), "")
    auto size = co_await f->size();
    WEFT_CO_ASSERT(size, size.error().message())
    EXPECT_EQ(*size, 10u);
    std::byte buf[4];
    auto r = co_await f->read_at(buf, 6);
    WEFT_CO_ASSERT(r, "")
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf), *r), "File");
    WEFT_CO_ASSERT(co_await f->set_len(5), "")
    auto shorter = co_await f->size();
    WEFT_CO_ASSERT(shorter, "")
    EXPECT_EQ(*shorter, 5u);
    f->close();
    WEFT_CO_ASSERT(co_await file::rename(path, moved), "")
    auto all = co_await file::read_all(moved);
    WEFT_CO_ASSERT(all, all.error().message())
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(all->data()), all->size()), "hello");
    WEFT_CO_ASSERT(co_await file::remove(moved), "")
    auto gone = co_await file::open(moved);
    WEFT_CO_ASSERT(!gone, "")
    EXPECT_EQ(gone.error(), std::error_code(ENOENT, std::system_category()));
  }());
}

TEST_P(file_io, read_to_end_reads_a_file_larger_than_one_staging_buffer) {
  const std::string path = temp_path("big");
  loop().block_on([&]() -> task<void> {
    open_options o;
    o.write = true;
    o.create = true;
    o.truncate = true;
    auto f = co_await file::open(path, o);
    WEFT_CO_ASSERT(f, "")
    std::string data(700 * 1024, 'x');
    for (std::size_t i = 0; i < data.size(); i += 4096) data[i] = static_cast<char>('a' + (i / 4096) % 26);
    std::size_t at = 0;
    while (at < data.size()) {
      auto w = co_await f->write(bytes_of(data).subspan(at));
      WEFT_CO_ASSERT(w && *w > 0, "")
      at += *w;
    }
    f->seek(0);
    auto back = co_await f->read_to_end();
    WEFT_CO_ASSERT(back, "")
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()), back->size()), data);
    WEFT_CO_ASSERT(co_await file::remove(path), "")
  }());
}

TEST_P(file_io, bad_input_is_a_typed_error) {
  loop().block_on([&]() -> task<void> {
    open_options none;
    none.read = false;
    auto f = co_await file::open(temp_path("none"), none);
    WEFT_CO_ASSERT(!f, "")
    EXPECT_EQ(f.error(), std::make_error_code(std::errc::invalid_argument));
    open_options o;
    o.write = true;
    o.create = true;
    o.exclusive = true;
    const std::string path = temp_path("excl");
    auto first = co_await file::open(path, o);
    WEFT_CO_ASSERT(first, "")
    auto second = co_await file::open(path, o);
    WEFT_CO_ASSERT(!second, "")
    EXPECT_EQ(second.error(), std::error_code(EEXIST, std::system_category()));
    WEFT_CO_ASSERT(co_await file::remove(path), "")
    file closed;
    std::byte b[1];
    auto r = co_await closed.read_at(b, 0);
    WEFT_CO_ASSERT(!r, "")
    EXPECT_EQ(r.error(), std::error_code(EBADF, std::system_category()));
  }());
}

TEST_P(file_io, unix_pairs_and_raw_descriptor_readiness) {
  loop().block_on([&]() -> task<void> {
    auto pair = unix_stream::pair();
    WEFT_CO_ASSERT(pair, "")
    auto& [a, b] = *pair;
    auto w = co_await write_all(a, bytes_of("line one\nline two\r\npartial"));
    WEFT_CO_ASSERT(w, "")
    a.close();
    auto readable = co_await wait_readable(b.native_handle());
    WEFT_CO_ASSERT(readable, "")
    EXPECT_TRUE(*readable & POLLIN);
    line_reader lines(b);
    std::vector<std::string> got;
    for (;;) {
      auto line = co_await lines.next_line();
      WEFT_CO_ASSERT(line, line.error().message())
      if (!*line) break;
      got.push_back(**line);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"line one", "line two", "partial"}));
  }());
}

// More operations completing at once than a ring's completion queue holds (4096): the kernel holds
// the excess, the driver sees the overflow, flushes it and loses no completion.
// Whether the kernel reads this file from the page cache without waiting (RWF_NOWAIT): the cached
// path of file::read_at needs it.
bool reads_without_waiting(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char byte = 0;
  iovec v{&byte, 1};
  const ssize_t n = ::preadv2(fd, &v, 1, 0, RWF_NOWAIT);
  ::close(fd);
  return n == 1;
}

TEST_P(file_io, a_cached_read_does_not_suspend_and_an_uncacheable_one_is_submitted) {
  const std::string path = temp_path("cached");
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "cached bytes", 12), 12);
    ::close(fd);
  }
  if (!reads_without_waiting(path)) {
    ::unlink(path.c_str());
    GTEST_SKIP() << "this file system does not read from the page cache with RWF_NOWAIT";
  }
  loop().block_on([&]() -> task<void> {
    auto f = co_await file::open(path);
    WEFT_CO_ASSERT(f, f.error().message())
    // A task spawned just before a read runs only if the reading task suspends (one loop, one
    // thread).
    auto mark_when_run = [](bool& ran) {
      return spawn([&ran]() -> task<void> {
        ran = true;
        co_return;
      });
    };
    bool other_ran = false;
    auto other = mark_when_run(other_ran);
    std::byte buf[6];
    auto hit = co_await f->read_at(buf, 7);
    WEFT_CO_ASSERT(hit, hit.error().message())
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf), *hit), "bytes");
    EXPECT_FALSE(other_ran) << "a page-cache hit suspended its task";
    EXPECT_EQ(loop().io_in_flight(), 0u);
    (void)co_await other;

    // procfs has no RWF_NOWAIT: the read goes to the driver, and the task suspends.
    auto proc = co_await file::open("/proc/self/stat");
    WEFT_CO_ASSERT(proc, proc.error().message())
    bool proc_other_ran = false;
    auto other2 = mark_when_run(proc_other_ran);
    std::byte stat[16];
    auto submitted = co_await proc->read_at(stat, 0);
    WEFT_CO_ASSERT(submitted, submitted.error().message())
    EXPECT_GT(*submitted, 0u);
    EXPECT_TRUE(proc_other_ran) << "an uncacheable read did not go through the driver";
    (void)co_await other2;
  }());
  ::unlink(path.c_str());
}

TEST_P(file_io, more_waits_in_flight_than_the_completion_queue_holds_all_complete) {
  loop().block_on([&]() -> task<void> {
    constexpr int waiters = 6000;
    auto pair = unix_stream::pair();
    WEFT_CO_ASSERT(pair, "")
    auto& [a, b] = *pair;
    const int fd = b.native_handle();
    int ready = 0;
    std::vector<join_handle<void>> handles;
    for (int i = 0; i < waiters; ++i) {
      handles.push_back(spawn([fd, &ready]() -> task<void> {
        auto r = co_await wait_readable(fd);
        if (r && (*r & POLLIN)) ++ready;
      }));
    }
    co_await sleep(std::chrono::milliseconds(5));  // every wait reaches the driver
    EXPECT_GT(loop().io_in_flight(), 0u);
    WEFT_CO_ASSERT(co_await write_all(a, bytes_of("!")), "")
    for (auto& h : handles) (void)co_await h;
    EXPECT_EQ(ready, waiters);
    EXPECT_EQ(loop().io_in_flight(), 0u);
    if (loop().io_status().backend == io_backend::io_uring) {
      EXPECT_GT(loop().io_status().completion_overflows, 0u) << "the test never filled the queue";
    }
  }());
}

TEST_P(file_io, a_child_process_pipeline_runs_and_is_waited_for) {
  loop().block_on([&]() -> task<void> {
    spawn_options o;
    o.in = stdio::pipe;
    o.out = stdio::pipe;
    auto child = child_process::spawn({"tr", "a-z", "A-Z"}, o);
    WEFT_CO_ASSERT(child, child.error().message())
    auto w = co_await write_all(child->stdin_pipe(), bytes_of("shout\n"));
    WEFT_CO_ASSERT(w, "")
    child->stdin_pipe().close();
    line_reader lines(child->stdout_pipe());
    auto line = co_await lines.next_line();
    WEFT_CO_ASSERT(line && *line, "")
    EXPECT_EQ(**line, "SHOUT");
    auto status = co_await child->wait();
    WEFT_CO_ASSERT(status, status.error().message())
    EXPECT_TRUE(status->success());
    auto sleeper = child_process::spawn({"sleep", "30"});
    WEFT_CO_ASSERT(sleeper, "")
    WEFT_CO_ASSERT(sleeper->kill(), "")
    auto killed = co_await sleeper->wait();
    WEFT_CO_ASSERT(killed, "")
    EXPECT_EQ(killed->signal, 15);
    auto missing = child_process::spawn({"/nonexistent/weft-no-such-program"});
    WEFT_CO_ASSERT(!missing, "")
    EXPECT_EQ(missing.error(), std::error_code(ENOENT, std::system_category()));
    auto empty = child_process::spawn({});
    WEFT_CO_ASSERT(!empty, "")
  }());
}

// Two tasks waiting for one child at once both get its status (only one of them reaps it).
TEST_P(file_io, two_waits_for_one_child_both_get_its_status) {
  loop().block_on([&]() -> task<void> {
    auto child = child_process::spawn({"sh", "-c", "sleep 0.05; exit 3"});
    WEFT_CO_ASSERT(child, child.error().message())
    child_process& c = *child;
    auto first = spawn([&c]() -> task<expected<exit_status, std::error_code>> { co_return co_await c.wait(); });
    auto second = spawn([&c]() -> task<expected<exit_status, std::error_code>> { co_return co_await c.wait(); });
    for (auto* h : {&first, &second}) {
      auto r = co_await timeout(io_test::guard, std::move(*h));
      WEFT_CO_ASSERT(r && *r, "a wait never finished")
      WEFT_CO_ASSERT(**r, (*r)->error().message())
      EXPECT_EQ((**r)->code, 3);
    }
  }());
}

// A descriptor number the user waited on raw and then closed behind weft's back, handed out again
// to a pipe or a socket pair weft makes: the driver forgets what it knew of the old descriptor,
// so the new one is non-blocking and a read of it times out instead of blocking the loop.
TEST_P(file_io, a_reused_descriptor_number_starts_afresh) {
  loop().block_on([&]() -> task<void> {
    for (int kind = 0; kind < 2; ++kind) {
      int raw[2];
      WEFT_CO_ASSERT(::pipe2(raw, O_CLOEXEC) == 0, "pipe2")
      WEFT_CO_ASSERT(::write(raw[1], "x", 1) == 1, "write")
      auto ready = co_await timeout(io_test::guard, wait_readable(raw[0]));
      WEFT_CO_ASSERT(ready && *ready, "the raw pipe never became readable")
      const int reused = raw[0];
      ::close(raw[0]);
      ::close(raw[1]);
      std::optional<unix_stream> other_end;
      byte_stream* s = nullptr;
      if (kind == 0) {
        auto pair = unix_stream::pair();
        WEFT_CO_ASSERT(pair, "")
        WEFT_CO_ASSERT(pair->first.native_handle() == reused, "the pair did not reuse the number")
        other_end.emplace(std::move(pair->second));
        s = &pair->first;
        std::byte buf[4];
        auto r = co_await timeout(std::chrono::milliseconds(50), s->read(buf));
        EXPECT_FALSE(r) << "a read of a silent socket pair finished";
      } else {
        spawn_options o;
        o.out = stdio::pipe;
        auto child = child_process::spawn({"sleep", "30"}, o);
        WEFT_CO_ASSERT(child, child.error().message())
        WEFT_CO_ASSERT(child->stdout_pipe().native_handle() == reused, "the pipe did not reuse the number")
        std::byte buf[4];
        auto r = co_await timeout(std::chrono::milliseconds(50), child->stdout_pipe().read(buf));
        EXPECT_FALSE(r) << "a read of a silent child's stdout finished";
        WEFT_CO_ASSERT(child->kill(), "")
        auto status = co_await timeout(io_test::guard, child->wait());
        WEFT_CO_ASSERT(status && *status, "the child was not reaped")
      }
    }
  }());
}

// What a write to the stdin pipe of a child that has already exited answers (its reader is gone).
task<expected<std::size_t, std::error_code>> write_to_an_exited_childs_stdin(std::string text) {
  spawn_options o;
  o.in = stdio::pipe;
  auto child = child_process::spawn({"true"}, o);
  if (!child) co_return unexpected(child.error());
  if (auto status = co_await child->wait(); !status) co_return unexpected(status.error());
  co_return co_await child->stdin_pipe().write(bytes_of(text));
}

// A pipe whose reader has exited refuses a write with EPIPE, a typed error: the write does not
// raise SIGPIPE, whose default action would end the whole process.
TEST_P(file_io, writing_to_a_pipe_whose_reader_exited_is_a_typed_error) {
  loop().block_on([&]() -> task<void> {
    auto w = co_await write_to_an_exited_childs_stdin("nobody reads this");
    WEFT_CO_ASSERT(!w, "a write to a pipe with no reader was accepted")
    EXPECT_EQ(w.error(), std::error_code(EPIPE, std::system_category()));
  }());
}

// The ignore weft sets for its own writes is not the child's: a child spawned afterwards has the
// default disposition back, so a shell that sends itself SIGPIPE ends by it.
TEST_P(file_io, a_child_gets_the_default_sigpipe_back) {
  if (!sigpipe_default_at_start()) {
    GTEST_SKIP() << "SIGPIPE was already ignored when the tests started (inherited from the parent): "
                    "weft leaves such an ignore alone, and children inherit it";
  }
  loop().block_on([&]() -> task<void> {
    // A write(2) first (sockets send with MSG_NOSIGNAL instead), so weft has made its change
    // whatever test ran before.
    auto w = co_await write_to_an_exited_childs_stdin("x");
    WEFT_CO_ASSERT(!w, "a write to a pipe with no reader was accepted")
    EXPECT_EQ(w.error(), std::error_code(EPIPE, std::system_category()));
    struct sigaction now{};
    WEFT_CO_ASSERT(::sigaction(SIGPIPE, nullptr, &now) == 0, "")
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "the process's own SIGPIPE is not ignored after a write";
    auto child = child_process::spawn({"sh", "-c", "kill -PIPE $$; exit 7"});
    WEFT_CO_ASSERT(child, child.error().message())
    auto status = co_await child->wait();
    WEFT_CO_ASSERT(status, status.error().message())
    EXPECT_EQ(status->signal, SIGPIPE) << "exit code " << status->code << ": the child inherited an ignored SIGPIPE";
  }());
}

// Kills and reaps `pid` if it is still a child of this process (running or a zombie): true when
// it was, that is when weft left it behind.
bool left_behind(pid_t pid) {
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 400; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG) < 0) return false;  // ECHILD: reaped
    if (info.si_pid == pid) return true;
    ::usleep(5'000);
  }
  return true;
}

std::string scratch_file(const char* name) {
  std::string path = ::testing::TempDir() + "weft-" + name + "-" + std::to_string(::getpid());
  ::close(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  return path;
}

// An open whose task is aborted after its openat went to the driver: the descriptor the kernel
// opens for nobody is closed, never left in the table.
TEST_P(file_io, an_aborted_open_closes_the_descriptor_it_opened) {
  const std::string path = scratch_file("aborted-open");
  const std::size_t before = io_test::open_fds();
  loop().block_on([&]() -> task<void> {
    for (int i = 0; i < 20; ++i) {
      auto opening = spawn(file::open(path));
      co_await yield_now();  // the open ran once: its openat is submitted
      opening.abort();
      co_await sleep(std::chrono::milliseconds(1));
    }
  }());
  loop().run_until_stalled();
  EXPECT_EQ(io_test::open_fds(), before);
  ::unlink(path.c_str());
}

// A file closed on a thread that does not own its loop: the close goes to the loop, which makes it
// there, so the loop's own use of the file's state (a read made before) never races it (the TSan
// build checks), and the descriptor is gone once the loop has run.
TEST_P(file_io, a_file_closed_on_another_thread_closes_on_its_loop) {
  const std::string path = scratch_file("foreign-close");
  const std::size_t before = io_test::open_fds();
  std::optional<file> f;
  std::atomic<bool> go{false};
  std::thread closer([&] {
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    f->close();
  });
  loop().block_on([&]() -> task<void> {
    auto opened = co_await file::open(path);
    WEFT_CO_ASSERT(opened, opened.error().message())
    f.emplace(std::move(*opened));
    std::byte buf[8];
    auto read = f->read_at(buf, 0);  // holds the file's state, not the file object
    go.store(true, std::memory_order_release);
    co_await sleep(std::chrono::milliseconds(5));
    auto r = co_await timeout(io_test::guard, std::move(read));
    WEFT_CO_ASSERT(r, "the read did not end")
  }());
  closer.join();
  EXPECT_FALSE(f->is_open());
  f.reset();
  loop().run_until_stalled();
  EXPECT_EQ(io_test::open_fds(), before);
  ::unlink(path.c_str());
}

// A loop destroyed with opens in flight reaps them, closing what they opened.
TEST_P(file_io, a_loop_destroyed_with_opens_in_flight_leaves_no_descriptor) {
  const std::string path = scratch_file("shutdown-open");
  const std::size_t before = io_test::open_fds();
  for (int round = 0; round < 10; ++round) {
    event_loop l(io_test::options_for(GetParam()));
    for (int i = 0; i < 5; ++i) {
      (void)l.spawn([](std::string p) -> task<void> {
        auto f = co_await file::open(std::move(p));
        co_await sleep(std::chrono::hours(1));
      }(path));
    }
    (void)l.run_one_turn();
  }
  EXPECT_EQ(io_test::open_fds(), before);
  ::unlink(path.c_str());
}

// A child whose wait() was dropped (here by a timeout) is still killed and reaped with its object:
// on epoll the dropped wait left the pidfd non-blocking, where a blocking waitid answers EAGAIN.
TEST_P(file_io, a_child_whose_wait_was_dropped_is_reaped_with_its_object) {
  pid_t pid = -1;
  loop().block_on([&]() -> task<void> {
    auto child = child_process::spawn({"sleep", "30"});
    WEFT_CO_ASSERT(child, child.error().message())
    pid = child->pid();
    auto w = co_await timeout(std::chrono::milliseconds(20), child->wait());
    EXPECT_FALSE(w) << "sleep 30 ended within 20 ms";
  }());
  EXPECT_FALSE(left_behind(pid));
}

// A child_process destroyed on a thread that does not own its loop: the kill and the reap go to
// the owner loop, which runs them at its next turn.
TEST_P(file_io, a_child_destroyed_on_another_thread_is_reaped_by_its_loop) {
  pid_t pid = -1;
  std::optional<child_process> held;
  loop().block_on([&]() -> task<void> {
    auto child = child_process::spawn({"sleep", "30"});
    WEFT_CO_ASSERT(child, child.error().message())
    pid = child->pid();
    held.emplace(std::move(*child));
  }());
  std::thread([&held] { held.reset(); }).join();
  loop().run_until_stalled();
  EXPECT_FALSE(left_behind(pid));
}

// A spawn whose pidfd cannot be opened (the descriptor table full) fails with that reason, and the
// child it started is ended and reaped, not left running.
TEST_P(file_io, a_spawn_without_room_for_its_pidfd_fails_and_leaves_no_child) {
  std::error_code failure;
  loop().block_on([&]() -> task<void> {
    rlimit old{};
    WEFT_CO_ASSERT(::getrlimit(RLIMIT_NOFILE, &old) == 0, "")
    rlimit low = old;
    low.rlim_cur = io_test::open_fds() + 4;
    WEFT_CO_ASSERT(::setrlimit(RLIMIT_NOFILE, &low) == 0, "")
    std::vector<int> hogs;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) hogs.push_back(fd);
    auto child = child_process::spawn({"sleep", "30"});  // stdio inherited: only the pidfd needs room
    for (int fd : hogs) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &old);
    WEFT_CO_ASSERT(!child, "spawned with a full descriptor table")
    failure = child.error();
  }());
  EXPECT_EQ(failure, std::error_code(EMFILE, std::system_category())) << failure.message();
  siginfo_t info{};
  EXPECT_NE(::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT), 0) << "a child was left behind";
}

// The errors a child_process answers without asking the OS are the ones the OS would give, in
// the system category, as every OS error weft passes on is.
TEST_P(file_io, child_process_errors_are_in_the_system_category) {
  loop().block_on([&]() -> task<void> {
    auto done = child_process::spawn({"true"});
    WEFT_CO_ASSERT(done, done.error().message())
    WEFT_CO_ASSERT(co_await done->wait(), "")
    auto k = done->kill();
    WEFT_CO_ASSERT(!k, "a reaped child took a signal")
    EXPECT_EQ(k.error(), std::error_code(ESRCH, std::system_category()));
    EXPECT_EQ(k.error(), std::errc::no_such_process);
    auto moved_from = child_process::spawn({"true"});
    WEFT_CO_ASSERT(moved_from, "")
    child_process owner = std::move(*moved_from);
    auto w = co_await moved_from->wait();
    WEFT_CO_ASSERT(!w, "a moved-from child was waited for")
    EXPECT_EQ(w.error(), std::error_code(EBADF, std::system_category()));
    auto k2 = moved_from->kill();
    WEFT_CO_ASSERT(!k2, "")
    EXPECT_EQ(k2.error(), std::error_code(EBADF, std::system_category()));
    WEFT_CO_ASSERT(co_await owner.wait(), "")
  }());
}

INSTANTIATE_TEST_SUITE_P(drivers, file_io, ::testing::Values(io_driver_choice::io_uring, io_driver_choice::epoll), io_test::driver_name);

}  // namespace
}  // namespace weft
