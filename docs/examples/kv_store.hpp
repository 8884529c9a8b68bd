// docs/examples/kv_store.hpp — a write-ahead-logged key-value store, its text protocol and client.
//
// The server keeps every key in memory and appends each PUT to a log file as a self-checking
// record (lengths, FNV-1a 64 checksum, key, value). Invariants:
//   * a PUT is answered OK only once its record is durable (written, then fdatasync completed);
//     ack_before_fsync, the known-bad variant, breaks exactly this one;
//   * one committer writes and syncs the log, batch after batch (group commit), at the log's end:
//     a batch is acknowledged only after its own sync, which covers every earlier batch, so an
//     acknowledged record never follows a torn one in the file;
//   * after a failed write or sync the log is never written again (its tail is unknown): every
//     later PUT answers ERR until the server is restarted and recovers;
//   * GET reads only acknowledged values (a batch enters the map when it is acknowledged);
//   * recovery replays the longest prefix of valid records, cuts the file there and syncs it;
//   * one request at a time per connection, so responses keep request order;
//   * everything lives on the loop that opened the server: every call comes from that loop's
//     thread, and nothing here is thread-safe.
//
// kv_server.cpp runs it on a real runtime; the simulator's kv_crash_recovery scenario runs the
// same functions on simulated hosts that crash, restart and are partitioned.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <weft/io.hpp>
#include <weft/weft.hpp>

namespace kv_example {

// ---- limits ------------------------------------------------------------------------------------

inline constexpr std::size_t key_max = 256;     // bytes of a key
inline constexpr std::size_t value_max = 4096;  // bytes of a value
// The longest request line: "PUT <key> <value>". A longer one is refused and its connection closed.
inline constexpr std::size_t request_line_max = 4 + key_max + 1 + value_max;
// The longest reply line: "VALUE <value>" (an ERR reason is shorter).
inline constexpr std::size_t reply_line_max = 6 + value_max;
// Records one group commit writes at most; more wait for the next one.
inline constexpr std::size_t batch_records_max = 128;
// Open connections at most; the server closes any beyond, unanswered.
inline constexpr std::size_t connections_max = 256;
// The pause after a failed accept (EMFILE, say) before the next one, so a lasting error does not spin.
inline constexpr weft::duration accept_retry_delay = std::chrono::milliseconds(10);

// ---- a one-loop notification -------------------------------------------------------------------

// Wakes the tasks of one loop waiting for a condition on state that loop owns. wait_until(pred)
// is a leaf, ready once pred() holds; notify() (after changing that state) makes every waiter
// re-check. Loop-confined: no locks, and no wake is lost because a waiter checks and registers
// in one poll, which nothing on the loop can interleave.
class loop_signal {
 public:
  template <class Pred>
  class waiter {
   public:
    waiter(loop_signal& signal, Pred pred) : signal_(signal), pred_(std::move(pred)) {}
    bool poll_ready(const weft::waker& w) {
      if (pred_()) return true;
      signal_.watch(w);
      return false;
    }
    void await_resume() const noexcept {}

   private:
    loop_signal& signal_;
    Pred pred_;
  };

  template <class Pred>
  waiter<Pred> wait_until(Pred pred) {
    return waiter<Pred>(*this, std::move(pred));
  }

  void notify() {
    // Taken out first: a woken task only queues a poll, but it may register again meanwhile.
    std::vector<weft::waker> woken = std::exchange(waiters_, {});
    for (weft::waker& w : woken) std::move(w).wake();
  }

 private:
  void watch(const weft::waker& w) {
    for (const weft::waker& known : waiters_) {
      if (known.will_wake(w)) return;  // a task polled again keeps one entry
    }
    waiters_.push_back(w);
  }

  std::vector<weft::waker> waiters_;  // stale entries (a waiter dropped) cost a spurious poll
};

// ---- log records -------------------------------------------------------------------------------

// A record: key length (u32 LE), value length (u32 LE), checksum (u64 LE) of the eight length
// bytes, the key and the value; then the key and the value.
inline constexpr std::size_t record_header_bytes = 16;
inline constexpr std::uint64_t fnv1a64_basis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t fnv1a64_prime = 0x100000001b3ULL;

inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = fnv1a64_basis) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= fnv1a64_prime;
  }
  return hash;
}

namespace detail {
inline void put_le(std::string& out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline std::uint64_t get_le(std::string_view in, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return v;
}
inline std::uint64_t record_checksum(std::string_view lengths, std::string_view key, std::string_view value) {
  return fnv1a64(value, fnv1a64(key, fnv1a64(lengths)));
}
inline std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
inline std::span<const std::byte> as_bytes(std::string_view text) { return std::as_bytes(std::span<const char>(text)); }
}  // namespace detail

// The record for key=value, ready to append.
inline std::string encode_record(std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(record_header_bytes + key.size() + value.size());
  detail::put_le(out, key.size(), 4);
  detail::put_le(out, value.size(), 4);
  detail::put_le(out, detail::record_checksum(std::string_view(out).substr(0, 8), key, value), 8);
  out.append(key);
  out.append(value);
  return out;
}

struct decoded_record {
  std::string_view key;
  std::string_view value;
  std::size_t size = 0;  // header included
};

// The record at the start of `bytes`, or nullopt when it is short, torn or corrupt. Lengths out of
// the protocol's bounds are corrupt too: the server never writes them.
inline std::optional<decoded_record> decode_record(std::string_view bytes) {
  if (bytes.size() < record_header_bytes) return std::nullopt;
  const std::uint64_t key_size = detail::get_le(bytes, 4);
  const std::uint64_t value_size = detail::get_le(bytes.substr(4), 4);
  if (key_size == 0 || key_size > key_max || value_size == 0 || value_size > value_max) return std::nullopt;
  const std::size_t size = record_header_bytes + key_size + value_size;
  if (bytes.size() < size) return std::nullopt;
  decoded_record r{bytes.substr(record_header_bytes, key_size),
                   bytes.substr(record_header_bytes + key_size, value_size), size};
  if (detail::get_le(bytes.substr(8), 8) != detail::record_checksum(bytes.substr(0, 8), r.key, r.value)) {
    return std::nullopt;
  }
  return r;
}

// ---- recovery ----------------------------------------------------------------------------------

struct recovery_report {
  std::size_t records = 0;            // valid records replayed
  std::uint64_t valid_bytes = 0;      // the log's length after recovery
  std::uint64_t discarded_bytes = 0;  // the torn or corrupt tail cut off
};

struct recovered_log {
  weft::file log;  // open for reading and writing; appends go at report.valid_bytes
  std::map<std::string, std::string> data;
  recovery_report report;
};

namespace detail {
inline std::error_code storage_failure() { return std::make_error_code(std::errc::io_error); }

// Writes all of `bytes` at `offset` (a write may move fewer bytes than asked).
inline weft::task<std::error_code> write_fully(weft::file& f, std::string_view bytes, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = co_await f.write_at(detail::as_bytes(bytes.substr(done)), offset + done);
    if (!n) co_return n.error();
    if (*n == 0) co_return make_error_code(weft::io_errc::write_zero);
    done += *n;
  }
  co_return std::error_code{};
}

// Makes the log's name durable (its creation, say): on Linux only a sync of its directory does.
// The simulated file system has no directories and makes names durable at once; there the open
// fails and nothing is needed.
inline weft::task<void> sync_directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  auto d = co_await weft::file::open(std::move(directory));
  if (!d) co_return;
  (void)co_await d->sync_all();
  d->close();
}
}  // namespace detail

// Opens (creating it if missing: an empty store) the log at `path`, a plain file name or path, and
// syncs its directory; no directory is ever created. Replays every valid record from the start,
// stops at the first short, torn or corrupt one, cuts the file there and syncs it, so later
// appends follow valid data.
inline weft::task<weft::expected<recovered_log, std::error_code>> recover(std::string path) {
  auto opened = co_await weft::file::open(path, weft::open_options{.read = true, .write = true, .create = true});
  if (!opened) co_return weft::unexpected(opened.error());
  co_await detail::sync_directory_of(path);
  recovered_log out;
  out.log = std::move(*opened);
  auto bytes = co_await out.log.read_to_end();
  if (!bytes) co_return weft::unexpected(bytes.error());
  const std::string_view all = detail::as_text(*bytes);
  std::size_t at = 0;
  while (auto record = decode_record(all.substr(at))) {
    out.data.insert_or_assign(std::string(record->key), std::string(record->value));
    at += record->size;
    ++out.report.records;
  }
  out.report.valid_bytes = at;
  out.report.discarded_bytes = all.size() - at;
  if (out.report.discarded_bytes > 0) {
    if (auto cut = co_await out.log.set_len(at); !cut) co_return weft::unexpected(cut.error());
    // The cut must be durable before anything is appended after it.
    if (auto synced = co_await out.log.sync_all(); !synced) co_return weft::unexpected(synced.error());
  }
  co_return std::move(out);
}

// ---- requests ----------------------------------------------------------------------------------

struct request {
  enum class verb { put, get } kind = verb::get;
  std::string key;
  std::string value;  // PUT only
};

namespace detail {
// Keys and values are printable ASCII without spaces, so a line splits on single spaces.
inline bool printable_word(std::string_view s) {
  for (const char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return !s.empty();
}
inline std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> words;
  for (;;) {
    const std::size_t space = line.find(' ');
    words.push_back(line.substr(0, space));
    if (space == std::string_view::npos) return words;
    line.remove_prefix(space + 1);
  }
}
// The reason a key or value is refused, or empty when it is fine.
inline std::string refusal(std::string_view what, std::string_view word, std::size_t max) {
  if (word.size() > max) return std::string(what) + " too long";
  if (!printable_word(word)) return "bad " + std::string(what);
  return {};
}
}  // namespace detail

// Parses "PUT <key> <value>" or "GET <key>"; the error is the reason an ERR reply gives.
inline weft::expected<request, std::string> parse_request(std::string_view line) {
  if (line.empty()) return weft::unexpected(std::string("empty request"));
  const std::vector<std::string_view> words = detail::split_spaces(line);
  request r;
  if (words[0] == "PUT") {
    if (words.size() != 3) return weft::unexpected(std::string("usage: PUT <key> <value>"));
    r.kind = request::verb::put;
  } else if (words[0] == "GET") {
    if (words.size() != 2) return weft::unexpected(std::string("usage: GET <key>"));
  } else {
    return weft::unexpected(std::string("unknown command"));
  }
  if (std::string why = detail::refusal("key", words[1], key_max); !why.empty()) return weft::unexpected(why);
  r.key = std::string(words[1]);
  if (r.kind == request::verb::put) {
    if (std::string why = detail::refusal("value", words[2], value_max); !why.empty()) return weft::unexpected(why);
    r.value = std::string(words[2]);
  }
  return r;
}

// ---- the server --------------------------------------------------------------------------------

struct server_config {
  weft::socket_address address = weft::socket_address::ipv4_loopback(0);  // port 0: a free one
  std::string log_path = "kv.log";
  // Known-bad: answer OK after the write but before its fdatasync, which then runs before the
  // next batch's write or at the stop. A crash in between loses acknowledged writes.
  bool ack_before_fsync = false;
};

struct server_stats {
  std::size_t connections = 0;   // open now
  std::size_t puts_waiting = 0;  // PUTs read and not yet committed (queued or being written)
  std::uint64_t batches = 0;     // group commits since open
  std::uint64_t records = 0;     // records appended since open
  std::error_code storage_error; // the failure that stopped the log's writes, if any
};

namespace detail {

struct put_outcome {
  bool done = false;
  std::error_code error;
};

struct pending_put {
  std::string key;
  std::string value;
  std::shared_ptr<put_outcome> outcome;  // shared: the connection may be gone by the commit
};

// Requests and replies are lines read strictly: a peer that died mid-line must not have "PUT k 1"
// stored for "PUT k 123", nor "VALUE 1" read for "VALUE 123"; the bytes it ends inside are
// io_errc::end_of_stream. A line may end in "\r\n", hence the byte past each maximum.
inline constexpr auto strict_lines = weft::line_reader::unterminated_line::reject;

struct connection {
  explicit connection(weft::tcp_stream s) : stream(std::move(s)), reader(stream, request_line_max + 1, strict_lines) {}
  weft::tcp_stream stream;
  weft::line_reader reader;
  bool idle = false;            // waiting for a request: a stop may close it at once
  bool closed_by_stop = false;  // a line read meanwhile is dropped unanswered
};

struct state {
  server_config config;
  weft::thread_handle home;  // the loop everything here belongs to
  weft::tcp_listener listener;
  weft::socket_address bound;
  weft::file log;
  std::uint64_t log_end = 0;
  std::map<std::string, std::string> data;  // acknowledged values only
  recovery_report recovered;
  std::deque<pending_put> pending;
  std::vector<pending_put> batch;  // being written and synced
  std::map<std::uint64_t, std::shared_ptr<connection>> connections;
  std::uint64_t next_connection = 0;
  std::error_code storage_error;  // set once; no write is attempted after it
  bool sync_owed = false;         // ack_before_fsync: acknowledged records not yet synced
  bool serving = false;
  bool stopping = false;
  bool stopped = false;
  std::uint64_t batches = 0;
  std::uint64_t records = 0;
  loop_signal work;      // the committer: a PUT queued, a connection ended, a stop requested
  loop_signal progress;  // a batch answered, the stop completed

  bool drained() const { return stopping && connections.empty() && pending.empty(); }

  void check_home(const char* what) const {
    if (!home.is_current()) throw weft::usage_error(std::string("kv_example::server::") + what + " off the server's loop");
  }

  // Closes every descriptor; what a finished or abandoned serve() leaves (a closed log is what the
  // simulator's disk crash requires).
  void close_all() noexcept {
    listener.close();
    for (auto& [id, c] : connections) c->stream.close();
    log.close();
  }

  // Answers every PUT still waiting with an error: after an abandoned serve() nothing will commit
  // them, and their connections' tasks must not wait forever.
  void abandon_waiting() noexcept {
    const auto fail = [](pending_put& p) {
      p.outcome->error = storage_failure();
      p.outcome->done = true;
    };
    for (pending_put& p : batch) fail(p);
    for (pending_put& p : pending) fail(p);
    batch.clear();
    pending.clear();
    progress.notify();
  }
};

// Keeps a connection in the server's table from its accept until its task ends, however it ends
// (a stop sees every accepted connection, even one whose task has not run yet).
class registration {
 public:
  registration(state& st, std::shared_ptr<connection> c) : st_(&st), id_(st.next_connection++) {
    st_->connections.emplace(id_, std::move(c));
  }
  registration(registration&& other) noexcept : st_(std::exchange(other.st_, nullptr)), id_(other.id_) {}
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
  registration& operator=(registration&&) = delete;
  ~registration() {
    if (st_ == nullptr) return;
    if (auto it = st_->connections.find(id_); it != st_->connections.end()) {
      it->second->stream.close();
      st_->connections.erase(it);
    }
    st_->work.notify();  // the committer may be waiting for the last connection of a stop
  }

 private:
  state* st_;
  std::uint64_t id_;
};

inline weft::task<std::string> answer(std::shared_ptr<state> st, std::string line) {
  auto parsed = parse_request(line);
  if (!parsed) co_return "ERR " + parsed.error() + "\n";
  request& r = *parsed;
  if (r.kind == request::verb::get) {
    const auto it = st->data.find(r.key);
    co_return it == st->data.end() ? std::string("NONE\n") : "VALUE " + it->second + "\n";
  }
  if (st->storage_error) co_return std::string("ERR storage unavailable\n");
  auto outcome = std::make_shared<put_outcome>();
  st->pending.push_back(pending_put{std::move(r.key), std::move(r.value), outcome});
  st->work.notify();
  co_await st->progress.wait_until([&outcome] { return outcome->done; });
  // An ERR leaves the PUT's fate unknown: the write may have reached the disk before it failed.
  co_return outcome->error ? std::string("ERR storage failed\n") : std::string("OK\n");
}

// One connection: a request at a time, answered in order, until the client ends, an error, or a
// stop (after the request in progress is answered). `held` keeps it in the table meanwhile.
inline weft::task<void> serve_connection(std::shared_ptr<state> st, std::shared_ptr<connection> c,
                                         [[maybe_unused]] registration held) {
  while (!st->stopping) {
    c->idle = true;
    auto line = co_await c->reader.next_line();
    c->idle = false;
    if (c->closed_by_stop) co_return;
    if (!line) {
      if (line.error() == weft::io_errc::line_too_long) {
        (void)co_await weft::write_all(c->stream, detail::as_bytes("ERR line too long\n"));
      }
      co_return;
    }
    if (!line.value()) co_return;  // the client ended between requests
    const std::string reply = co_await answer(st, std::move(*line.value()));
    if (!co_await weft::write_all(c->stream, detail::as_bytes(reply))) co_return;
  }
}

inline weft::task<void> accept_loop(std::shared_ptr<state> st) {
  while (!st->stopping) {
    auto stream = co_await st->listener.accept();
    if (st->stopping) co_return;  // the stop closed the listener; a connection got meanwhile is dropped
    if (!stream) {
      co_await weft::sleep(accept_retry_delay);
      continue;
    }
    if (st->connections.size() >= connections_max) continue;  // closed unanswered
    auto c = std::make_shared<connection>(std::move(*stream));
    registration held(*st, c);
    weft::spawn([st, c, held = std::move(held)]() mutable { return serve_connection(st, c, std::move(held)); }).detach();
  }
}

// Fails every PUT of the batch or, with no error, puts its values in the map and answers them OK.
inline void answer_batch(state& st, std::error_code error) {
  for (pending_put& p : st.batch) {
    if (!error) st.data.insert_or_assign(std::move(p.key), std::move(p.value));
    p.outcome->error = error;
    p.outcome->done = true;
  }
  st.batch.clear();
  st.progress.notify();
}

// The part of a commit that touches the disk; an error stops the log's writes for good.
inline weft::task<std::error_code> write_batch(state& st, std::string bytes) {
  try {
    if (st.sync_owed) {  // ack_before_fsync: the previous batch's sync, late
      if (auto s = co_await st.log.sync_data(); !s) co_return s.error();
      st.sync_owed = false;
    }
    if (auto e = co_await write_fully(st.log, bytes, st.log_end)) co_return e;
    st.log_end += bytes.size();
    if (st.config.ack_before_fsync) {
      st.sync_owed = true;
      co_return std::error_code{};
    }
    if (auto s = co_await st.log.sync_data(); !s) co_return s.error();
    co_return std::error_code{};
  } catch (...) {
    // An exception out of an await (the simulator injects some) leaves the tail unknown too.
    co_return storage_failure();
  }
}

// The one committer: takes up to batch_records_max queued PUTs, appends them in one write at the
// log's end, syncs, answers them; until a stop has drained every connection and PUT.
inline weft::task<void> commit_loop(std::shared_ptr<state> st) {
  for (;;) {
    co_await st->work.wait_until([&st] { return !st->pending.empty() || st->drained(); });
    if (st->pending.empty()) break;
    std::string bytes;
    while (!st->pending.empty() && st->batch.size() < batch_records_max) {
      bytes += encode_record(st->pending.front().key, st->pending.front().value);
      st->batch.push_back(std::move(st->pending.front()));
      st->pending.pop_front();
    }
    std::error_code error = st->storage_error;
    if (!error) {
      error = co_await write_batch(*st, std::move(bytes));
      if (error) {
        st->storage_error = error;
      } else {
        ++st->batches;
        st->records += st->batch.size();
      }
    }
    answer_batch(*st, error);
  }
  if (st->sync_owed && !st->storage_error) {
    auto s = co_await st->log.sync_data();
    if (s) st->sync_owed = false;
    else st->storage_error = s.error();
  }
}

// Marks the stop complete however serve() ends (normally, or its task cancelled or failing).
class serve_scope {
 public:
  explicit serve_scope(std::shared_ptr<state> st) : st_(std::move(st)) {}
  serve_scope(const serve_scope&) = delete;
  serve_scope& operator=(const serve_scope&) = delete;
  ~serve_scope() {
    st_->stopping = true;
    st_->close_all();
    st_->abandon_waiting();
    st_->stopped = true;
    st_->progress.notify();
  }

 private:
  std::shared_ptr<state> st_;
};

inline weft::task<weft::expected<void, std::error_code>> serve(std::shared_ptr<state> st) {
  st->check_home("serve");
  if (st->serving) throw weft::usage_error("kv_example::server::serve() called twice");
  st->serving = true;
  serve_scope scope(st);
  auto acceptor = weft::spawn([st] { return accept_loop(st); });
  co_await commit_loop(st);
  (void)co_await acceptor;  // request_stop closed the listener: it ends at once
  if (st->storage_error) co_return weft::unexpected(st->storage_error);
  co_return weft::expected<void, std::error_code>{};
}

}  // namespace detail

// A key-value server on the loop that opened it. A cheap handle: copies share one server.
class server {
 public:
  // Recovers the log at config.log_path, then binds config.address; on the current loop (inside a
  // task), which the server then belongs to.
  static weft::task<weft::expected<server, std::error_code>> open(server_config config) {
    auto st = std::make_shared<detail::state>();
    st->config = std::move(config);
    weft::event_loop* here = weft::event_loop::current();
    if (here == nullptr) throw weft::usage_error("kv_example::server::open outside a driven loop");
    st->home = here->handle();
    auto recovered = co_await recover(st->config.log_path);
    if (!recovered) co_return weft::unexpected(recovered.error());
    st->log = std::move(recovered->log);
    st->data = std::move(recovered->data);
    st->recovered = recovered->report;
    st->log_end = st->recovered.valid_bytes;
    auto listener = weft::tcp_listener::bind(st->config.address);
    if (!listener) {
      st->log.close();
      co_return weft::unexpected(listener.error());
    }
    auto bound = listener->local_address();
    if (!bound) {
      st->log.close();
      co_return weft::unexpected(bound.error());
    }
    st->listener = std::move(*listener);
    st->bound = *bound;
    co_return server(std::move(st));
  }

  // The address the listener is bound to (its port when config.address asked for port 0).
  const weft::socket_address& local_address() const noexcept { return st_->bound; }
  const recovery_report& recovered() const noexcept { return st_->recovered; }

  // Serves until a stop completes, then closes the listener, every connection and the log. Once
  // per server, on its loop. Answers the storage error that stopped the log's writes, if any.
  // If its task is cancelled instead, everything is closed just the same, with no final sync.
  weft::task<weft::expected<void, std::error_code>> serve() const { return detail::serve(st_); }

  // Starts a graceful stop. On the server's loop thread only (usage_error elsewhere); another
  // thread posts it there (a task spawned on that worker, or the loop's thread_handle). Stops
  // accepting (closes the listener) and closes the connections waiting for a request; each other
  // connection answers the request it is processing and closes; the queued PUTs are committed
  // and synced; then serve() returns and stopped() completes. Later calls do nothing. A client
  // that sends without reading its answers can hold the stop until it reads or disconnects.
  void request_stop() const {
    detail::state& st = *st_;
    st.check_home("request_stop");
    if (st.stopping) return;
    st.stopping = true;
    st.listener.close();
    for (auto& [id, c] : st.connections) {
      if (!c->idle) continue;
      c->closed_by_stop = true;
      c->stream.close();
    }
    st.work.notify();
  }

  // A leaf, on the server's loop: ready once serve() has finished (the stop is acknowledged).
  auto stopped() const {
    return st_->progress.wait_until([st = st_] { return st->stopped; });
  }

  server_stats stats() const {
    return server_stats{st_->connections.size(), st_->pending.size() + st_->batch.size(), st_->batches,
                        st_->records, st_->storage_error};
  }

 private:
  explicit server(std::shared_ptr<detail::state> st) noexcept : st_(std::move(st)) {}
  std::shared_ptr<detail::state> st_;
};

// ---- the client --------------------------------------------------------------------------------

struct reply {
  enum class kind { ok, value, none, error } what = kind::error;
  std::string text;  // the value (kind::value) or the server's reason (kind::error)

  friend bool operator==(const reply&, const reply&) = default;
};

// Parses one reply line; a line the protocol does not have is std::errc::protocol_error.
inline weft::expected<reply, std::error_code> parse_reply(std::string_view line) {
  if (line == "OK") return reply{reply::kind::ok, {}};
  if (line == "NONE") return reply{reply::kind::none, {}};
  if (line.starts_with("VALUE ")) return reply{reply::kind::value, std::string(line.substr(6))};
  if (line.starts_with("ERR ")) return reply{reply::kind::error, std::string(line.substr(4))};
  return weft::unexpected(std::make_error_code(std::errc::protocol_error));
}

// One connection to a server, on the loop that connected it (any loop or simulated host). Its
// calls run one at a time. After an error answer (the connection failed) it is done: connect anew.
// It has no deadlines of its own: wrap a call in weft::timeout, and connect anew after one elapsed
// (an abandoned call leaves the stream between a request and its answer).
class client {
 public:
  static weft::task<weft::expected<client, std::error_code>> connect(weft::socket_address to) {
    auto stream = co_await weft::tcp_stream::connect(to);
    if (!stream) co_return weft::unexpected(stream.error());
    co_return client(std::make_unique<link>(std::move(*stream)));
  }

  // OK once the value is durable; a key or value the protocol refuses is std::errc::invalid_argument
  // here, without a round trip.
  weft::task<weft::expected<reply, std::error_code>> put(std::string key, std::string value) {
    if (!detail::refusal("key", key, key_max).empty() || !detail::refusal("value", value, value_max).empty()) {
      co_return weft::unexpected(std::make_error_code(std::errc::invalid_argument));
    }
    co_return co_await request("PUT " + key + " " + value);
  }
  // VALUE with the last acknowledged value, or NONE.
  weft::task<weft::expected<reply, std::error_code>> get(std::string key) {
    if (!detail::refusal("key", key, key_max).empty()) {
      co_return weft::unexpected(std::make_error_code(std::errc::invalid_argument));
    }
    co_return co_await request("GET " + key);
  }
  // Sends one line as it is (a '\n' is added) and reads its reply: for malformed requests.
  weft::task<weft::expected<reply, std::error_code>> request(std::string line) {
    if (!link_) co_return weft::unexpected(std::make_error_code(std::errc::not_connected));
    line += '\n';
    if (auto sent = co_await weft::write_all(link_->stream, detail::as_bytes(line)); !sent) {
      co_return weft::unexpected(sent.error());
    }
    auto back = co_await link_->reader.next_line();
    if (!back) co_return weft::unexpected(back.error());
    if (!back.value()) co_return weft::unexpected(make_error_code(weft::io_errc::end_of_stream));
    co_return parse_reply(*back.value());
  }

  void close() noexcept { link_.reset(); }

 private:
  // The reader refers to the stream: both live at one address however the client moves.
  struct link {
    explicit link(weft::tcp_stream s) : stream(std::move(s)), reader(stream, reply_line_max + 1, detail::strict_lines) {}
    weft::tcp_stream stream;
    weft::line_reader reader;
  };
  explicit client(std::unique_ptr<link> l) noexcept : link_(std::move(l)) {}
  std::unique_ptr<link> link_;
};

}  // namespace kv_example
