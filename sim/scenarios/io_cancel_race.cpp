// Built-in scenario io_cancel_race — reads given up while their completions race in.
//
// A writer thread, on a loop of its own, connects over loopback TCP and writes `chunks` chunks
// of seeded sizes (1 byte to 32 KiB) with seeded virtual-time pauses (0-2 ms) between them, then
// shuts down writing. The main loop accepts and reads the stream to its end, giving reads up in
// two ways, each a race between the cancel and the completion: a read under a timeout of 0-3
// virtual ms, or a read in a task of its own that is aborted after a pause of 0-3 ms (its outcome
// then says whether its bytes came first). With io_latency on, completions land near the
// deadlines.
//
// Oracle (io_conversation.hpp, and the stream's promise that a dropped read loses no bytes): the
// bytes the finished reads returned, in order, are exactly the bytes written — or a prefix, in a
// run that injects io_reset or task_exception.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <weft/event_loop.hpp>
#include <weft/io.hpp>
#include <weft/join_handle.hpp>
#include <weft/platform/thread.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/harness.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/task.hpp>
#include <weft/time.hpp>

#include "io_conversation.hpp"

namespace {

using namespace weft;
using sim::scenarios::check_stream;
using sim::scenarios::io_bytes;
using sim::scenarios::io_payload;

constexpr std::int64_t chunks_max = 24;
constexpr std::uint64_t chunk_bytes_max = 32 * 1024;
constexpr std::uint64_t pause_us_max = 2'000;
constexpr std::uint64_t give_up_us_max = 3'000;
constexpr std::size_t read_bytes = 8 * 1024;

struct plan {
  std::vector<std::size_t> chunk_sizes;
  std::vector<std::uint64_t> pauses_us;    // before each chunk
  std::vector<std::uint64_t> give_ups_us;  // per read attempt, cycled
  std::vector<bool> by_abort;              // per read attempt, cycled: abort a task, else timeout
};

task<void> write_chunks(socket_address at, const plan& p, std::string& written) {
  try {
    auto conn = co_await tcp_stream::connect(at);
    if (!conn) co_return;
    for (std::size_t i = 0; i < p.chunk_sizes.size(); ++i) {
      co_await sleep(std::chrono::microseconds(p.pauses_us[i]));
      const std::string chunk = io_payload(p.chunk_sizes[i], 0, i);
      written += chunk;  // before the write: one cut short still sent a prefix of it
      auto w = co_await write_all(*conn, io_bytes(chunk));
      if (!w) co_return;
    }
    (void)co_await conn->shutdown(SHUT_WR);
  } catch (const injected_fault&) {
    // The conversation ends here (the oracle accepts a prefix under task_exception).
  }
}

// One read in a task of its own: the bytes it got ("" at the end of the stream), or an error.
task<expected<std::string, std::error_code>> read_once(tcp_stream& conn) {
  std::string buf(read_bytes, '\0');
  auto n = co_await conn.read(std::as_writable_bytes(std::span<char>(buf)));
  if (!n) co_return unexpected(n.error());
  buf.resize(*n);
  co_return buf;
}

// Reads to the end of the stream, giving reads up as the plan says. Sets `ended` at the end of
// the stream.
task<void> read_racing(tcp_listener& listener, const plan& p, std::string& received, bool& ended) {
  try {
    auto accepted = co_await listener.accept();
    if (!accepted) co_return;
    tcp_stream conn = std::move(*accepted);
    std::string buf(read_bytes, '\0');
    for (std::size_t attempt = 0;; ++attempt) {
      const auto give_up = std::chrono::microseconds(p.give_ups_us[attempt % p.give_ups_us.size()]);
      if (p.by_abort[attempt % p.by_abort.size()]) {
        // The task reads `conn`: it is aborted and settled before this frame can leave.
        join_handle<expected<std::string, std::error_code>> h = spawn(read_once(conn));
        try {
          co_await sleep(give_up);
        } catch (const injected_fault&) {
          // Give the read up early instead.
        }
        h.abort();
        auto outcome = co_await sim::settle_join(h);
        if (!outcome && outcome.error().is_panicked()) co_return;  // an injected fault ended it
        if (!outcome) continue;  // aborted before its bytes came: they wait for the next read
        if (!*outcome) co_return;
        if ((*outcome)->empty()) break;
        received += **outcome;
      } else {
        auto got = co_await timeout(give_up, conn.read(std::as_writable_bytes(std::span<char>(buf))));
        if (!got) continue;  // elapsed: the read was dropped, its bytes wait for the next one
        if (!*got) co_return;
        if (**got == 0) break;
        received.append(buf.data(), **got);
      }
    }
    ended = true;
  } catch (const injected_fault&) {
    // The conversation ends here (the oracle accepts a prefix under task_exception).
  }
}

}  // namespace

WEFT_SIM_SCENARIO(io_cancel_race) (weft::sim::context& sim) {
  const std::int64_t chunks = sim.param("chunks", static_cast<std::int64_t>(sim.pick(1, chunks_max)));
  plan p;
  for (std::int64_t i = 0; i < chunks; ++i) {
    p.chunk_sizes.push_back(sim.pick(1, chunk_bytes_max));
    p.pauses_us.push_back(sim.pick(0, pause_us_max));
  }
  for (int i = 0; i < 16; ++i) {
    p.give_ups_us.push_back(sim.pick(0, give_up_us_max));
    p.by_abort.push_back(sim.chance(1, 2));
  }

  event_loop reader_loop;
  auto bound = sim::scenarios::loopback_listener(sim, reader_loop);
  if (!bound) return;
  tcp_listener& listener = bound->first;
  const socket_address at = bound->second;
  std::string written;
  std::vector<platform::thread> threads;
  sim::join_on_exit join_all(threads);
  threads.push_back(sim.start_thread([&sim, &p, &written, at] {
    sim.name_thread("writer");
    event_loop loop;
    loop.block_on(write_chunks(at, p, written));
  }));
  std::string received;
  bool ended = false;
  reader_loop.block_on(read_racing(listener, p, received, ended));
  listener.close();  // a reader that ended early leaves nobody to accept a connection it kept
  threads.front().join();
  check_stream(sim, "the reader", written, received, ended);
  if (!ended && !sim::scenarios::io_conversations_may_break(sim)) sim.fail("the reader never saw the end of the stream");
}
WEFT_SIM_SCENARIO_DOC(io_cancel_race, "reads given up by timeouts and aborts race their completions on a TCP stream");
WEFT_SIM_SCENARIO_KNOBS(io_cancel_race, {{"chunks", 1, chunks_max, "chunks the writer sends, with pauses between"}});
