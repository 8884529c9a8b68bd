// io_unavailable_main.cpp — a loop where io_uring is refused: the fallback and its typed reason.
//
// Runs as its own process (`weft-io-unavailable eperm|enosys`): before anything else it installs a
// seccomp filter that answers io_uring_setup with EPERM (what seccomp policies and
// kernel.io_uring_disabled do) or ENOSYS (a kernel without io_uring). Then:
//   * an automatic loop runs on epoll and reports not_permitted / kernel_lacks_io_uring;
//   * a loop that requires io_uring throws io_unavailable_error with that reason;
//   * a runtime that requires it refuses to start;
//   * I/O still works on the fallback (a TCP round trip).
// Exits 0 when every check holds; prints what failed otherwise.
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <weft/io.hpp>
#include <weft/weft.hpp>

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "io_unavailable: FAILED: %s\n", what);
    ++failures;
  }
}

bool refuse_io_uring(int err) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

weft::task<bool> round_trip() {
  auto listener = weft::tcp_listener::bind(weft::socket_address::ipv4_loopback(0));
  if (!listener) co_return false;
  auto client = co_await weft::tcp_stream::connect(*listener->local_address());
  auto server = co_await listener->accept();
  if (!client || !server) co_return false;
  const char hello[] = "hi";
  if (!co_await weft::write_all(*client, std::as_bytes(std::span<const char>(hello, 2)))) co_return false;
  char back[2] = {};
  co_return static_cast<bool>(co_await weft::read_exact(*server, std::as_writable_bytes(std::span<char>(back, 2))));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "eperm" && mode != "enosys") {
    std::fprintf(stderr, "usage: weft-io-unavailable eperm|enosys\n");
    return 2;
  }
  const bool eperm = mode == "eperm";
  if (!refuse_io_uring(eperm ? EPERM : ENOSYS)) {
    std::fprintf(stderr, "io_unavailable: cannot install the seccomp filter: %s\n", std::strerror(errno));
    return 1;
  }
  const weft::io_unavailable expected =
      eperm ? weft::io_unavailable::not_permitted : weft::io_unavailable::kernel_lacks_io_uring;

  {
    weft::event_loop loop;
    const weft::io_driver_status s = loop.io_status();
    check(s.backend == weft::io_backend::epoll, "an automatic loop falls back to epoll");
    check(s.fallback_reason == expected, "the fallback names why io_uring is unavailable");
    check(loop.block_on(round_trip()), "a TCP round trip works on the fallback");
  }
  try {
    weft::event_loop::options o;
    o.io_driver = weft::io_driver_choice::io_uring;
    weft::event_loop loop(o);
    check(false, "a loop that requires io_uring is refused");
  } catch (const weft::io_unavailable_error& e) {
    check(e.reason() == expected, "the refusal carries the reason");
  }
  try {
    weft::runtime rt = weft::runtime::builder().workers(1).io_driver(weft::io_driver_choice::io_uring).build();
    check(false, "a runtime that requires io_uring is refused");
  } catch (const weft::start_error&) {
  }
  if (failures == 0) std::printf("io_unavailable (%s): every check held\n", mode.c_str());
  return failures == 0 ? 0 : 1;
}
