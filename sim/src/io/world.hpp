// world.hpp — the simulated kernel one simulation run shares between all its loops and hosts:
// virtual fds, a network (TCP, UDP, AF_UNIX stream and datagram) and an in-memory file system.
// The engine creates it at the run's first I/O and destroys it with the run, so no fd, byte or
// port reaches the next seed.
//
// Hosts: every simulated thread runs on a host (engine.hpp; host 0 is the scenario's own). Each
// host has its own fd table, file system, ports and loopback, and a network address (address.hpp).
// Messages between two hosts cross a link (from, to): each takes a latency drawn from the link's
// range, a cut link drops datagrams and holds stream bytes and connects until it is repaired, a
// held link holds everything until released. A crash ends a host's incarnation: its descriptors
// close at once (connections reset, nothing flushed; a peer behind a cut or held link stays
// half-open until the link opens), its disk loses what was not synced, and every later call of
// its old threads fails EIO.
//
// Every entry point (submit, execute, cancel, cancel_all) runs to its end without a scheduling
// point: the simulated threads see each system call as one step. An operation either finishes
// at once, or waits in a queue of the socket it needs (readable bytes, room, a connection) and
// finishes when a later step changes that socket; `settle()` serves those queues after each
// step, in the order the sockets changed. A finished operation is scheduled on its driver's
// endpoint with a due time (now, when what it waited for arrives from another host, or later
// under the io_latency fault); the endpoints to wake are collected and the driver unparks them
// after the step (take_wake), since unparking is a scheduling point.
//
// Determinism: fds are the lowest free number, ports count up from ephemeral_port_first, ids are
// ranks in the run, and every container iterated is ordered by such numbers or by names.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <weft/platform/io_request.hpp>

#include "endpoint.hpp"
#include "objects.hpp"

namespace weft::sim::io {

// fds one simulated host may hold at once (EMFILE beyond).
inline constexpr std::size_t open_fds_max = 1'024;
// The first fd handed out: 0-2 stand for the standard streams, which the simulator does not model.
inline constexpr int first_fd = 3;
// Ports that port 0 (and an unbound connect, send or listen) picks from, in order.
inline constexpr std::uint16_t ephemeral_port_first = 32'768;
inline constexpr std::uint16_t ephemeral_port_last = 60'999;
// The largest regular file, and all files' bytes of one host together (EFBIG, ENOSPC beyond).
inline constexpr std::uint64_t file_bytes_max = std::uint64_t{16} << 20;
inline constexpr std::uint64_t file_system_bytes_max = std::uint64_t{64} << 20;
// One file read in this many misses the simulated page cache and goes through submit().
inline constexpr std::uint64_t page_cache_miss_one_in = 2;
// The longest path (ENAMETOOLONG beyond), as PATH_MAX.
inline constexpr std::size_t path_bytes_max = 4'096;
// A link's latency range until the scenario sets one: a network inside one data centre.
inline constexpr duration link_latency_min_default = std::chrono::microseconds(100);
inline constexpr duration link_latency_max_default = std::chrono::milliseconds(2);
// The longest latency a scenario may give a link.
inline constexpr duration link_latency_limit = std::chrono::seconds(60);

// How one direction between two hosts carries messages.
struct link_conditions {
  duration latency_min = link_latency_min_default;
  duration latency_max = link_latency_max_default;
  bool cut = false;   // partitioned: datagrams lost, stream bytes and connects wait for repair
  bool held = false;  // every message waits until released
};

class world {
 public:
  world();
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  // Starts `op` for `owner`: it finishes now (scheduled on `owner`) or waits.
  void submit(const std::shared_ptr<endpoint>& owner, platform::io_operation& op);
  // The driver delivers `op`'s completion now: the kernel no longer holds it.
  void delivered(const platform::io_operation& op);
  // Whether `op` was submitted and its completion not yet delivered: the kernel may still write
  // its buffers and will call its complete(). The buffer-lifetime oracle asks this.
  bool holds(const platform::io_operation& op) const { return held_.count(&op) != 0; }
  // Makes host `h` known (hosts 0..h): its address is reachable from then on.
  void add_host(std::uint32_t h) { (void)host(h); }
  std::uint32_t incarnation(std::uint32_t h) { return host(h).incarnation; }
  // A control call now: its result, or -EAGAIN for an operation that would have to wait.
  std::int64_t execute(const platform::io_request& r);
  // driver::try_now: a positional read of a regular file, done now unless the seeded draw says
  // the page cache misses (-EAGAIN); -EOPNOTSUPP for anything else.
  std::int64_t read_if_cached(const platform::io_request& r);
  // Asks `op` (submitted through `owner`, not delivered yet) to stop: a waiting op is scheduled
  // with -ECANCELED; one whose result is known keeps it.
  void cancel(endpoint& owner, platform::io_operation& op);
  // cancel() for every waiting operation of `owner`.
  void cancel_all(endpoint& owner);
  // The next endpoint with new completions, other than `self` (the caller needs no wake).
  std::shared_ptr<endpoint> take_wake(const endpoint* self);

  // Regular files open in any descriptor of `host` (a disk crash needs none: the process is gone).
  std::size_t open_files(std::uint32_t host) const;
  // A crash of `host`'s disk (files.cpp): each file keeps what its last fsync made durable, plus
  // the first sectors of its unsynced contents, their count drawn from the fault stream (all,
  // some or none: a torn write). Names stay as they are. Returns how many files lost bytes.
  std::size_t crash_disk(std::uint32_t host);
  // Ends `host`'s incarnation: every descriptor closed as at a process kill (connections reset,
  // waiting operations failed EIO), then crash_disk. Later calls from its old threads fail EIO.
  void crash_host(std::uint32_t host);

  // ---- links (network.cpp) ------------------------------------------------------------------
  link_conditions& link(std::uint32_t from, std::uint32_t to);
  // After a link was repaired or released: its held messages leave now, with their latency.
  void link_opened(std::uint32_t from, std::uint32_t to);
  // Resets every connection between hosts `a` and `b`: both ends fail ECONNRESET.
  std::size_t reset_between(std::uint32_t a, std::uint32_t b);

 private:
  struct descriptor {
    std::shared_ptr<open_file> file;
    std::shared_ptr<socket> sock;
  };
  // An operation's outcome so far: finished (with its completion channel), or waiting in
  // `queue` of `where`.
  struct step {
    bool done = true;
    std::int64_t result = 0;
    socket* channel_of = nullptr;  // finished on this socket's channel `dir`: ordered completions
    direction dir = direction::in;
    std::shared_ptr<socket> where;
    std::deque<pending_op> socket::*queue = nullptr;
    instant not_before = instant::min();  // what it took arrives from another host then
    std::uint64_t message = 0;            // the first message from another host it took
  };
  static step finished(std::int64_t result, instant not_before = instant::min()) {
    step s;
    s.result = result;
    s.not_before = not_before;
    return s;
  }
  static step wait_in(std::shared_ptr<socket> where, std::deque<pending_op> socket::*queue) {
    step s;
    s.done = false;
    s.where = std::move(where);
    s.queue = queue;
    return s;
  }
  static step on_channel(std::int64_t result, socket& s, direction d, instant not_before = instant::min()) {
    step out = finished(result, not_before);
    out.channel_of = &s;
    out.dir = d;
    return out;
  }

  // ---- the core (world.cpp) -----------------------------------------------------------------
  // A host's part of the kernel. Held in a deque: inodes point at their host's byte count.
  struct fs_node {
    std::shared_ptr<inode> file;  // a regular file
    std::weak_ptr<socket> sock;   // else an AF_UNIX socket's name (expired: its socket closed)
  };
  struct host_state {
    std::map<int, descriptor> fds;
    // The file system: a flat namespace of names (no directories), each a file or a socket name.
    std::map<std::string, fs_node> files;
    std::uint64_t file_system_bytes = 0;
    std::uint32_t incarnation = 0;  // advanced by each crash
  };
  host_state& host(std::uint32_t h);
  // The calling thread's host, or null when its incarnation has crashed (every call fails EIO).
  host_state* caller();
  // The host the step being taken acts on (the caller's, or a waiting operation's when a queue
  // is served).
  host_state& here() { return *here_; }
  std::uint32_t here_id() const noexcept { return here_index_; }
  void act_on(std::uint32_t h) {
    here_index_ = h;
    here_ = &host(h);
  }

  step attempt(const platform::io_request& r, pending_op* waiting);
  void finish(pending_op& p, const step& s);
  void enqueue(pending_op p, const step& s);
  void serve(socket& s, std::deque<pending_op> socket::*queue, bool in_order);
  void settle();
  void touch(const std::shared_ptr<socket>& s);
  descriptor* lookup(int fd);
  int allocate_fd(descriptor d);
  void register_socket(const std::shared_ptr<socket>& s);
  // When a message from `from` to `to` sent now (or at `sent`) arrives (`held` while the link
  // holds it), no earlier than `after`.
  instant arrival(std::uint32_t from, std::uint32_t to, instant after, std::optional<instant> sent = std::nullopt);
  bool link_blocked(std::uint32_t from, std::uint32_t to);
  bool link_cut(std::uint32_t from, std::uint32_t to);
  // A new message from `from` to `to` (0 on one host: no message crosses a link), traced.
  std::uint64_t new_message(std::uint32_t from, std::uint32_t to, std::size_t bytes, const char* what);
  // Bytes of `s`'s inbound that have arrived by `t`.
  static std::size_t arrived(const socket& s, instant t);
  static void consume(socket& s, std::size_t n);
  // Whether `node` is a host of this run (a network address may name one that is not).
  bool known_host(std::int32_t node) const noexcept {
    return node >= 0 && static_cast<std::size_t>(node) < hosts_.size();
  }
  std::int32_t node_for(const address& a) const { return a.node == own_node ? static_cast<std::int32_t>(here_index_) : a.node; }

  // ---- sockets (network.cpp) ----------------------------------------------------------------
  std::int64_t op_socket(const platform::io_request& r);
  std::int64_t op_socketpair(int domain, int type, int* fds);
  std::int64_t op_pipe(int* fds);
  std::shared_ptr<socket> make_socket(int domain, int type);
  std::int64_t op_bind(const std::shared_ptr<socket>& s, const platform::io_request& r);
  std::int64_t op_listen(const std::shared_ptr<socket>& s, const platform::io_request& r);
  std::int64_t op_setsockopt(const platform::io_request& r);
  std::int64_t op_getsockopt(const platform::io_request& r);
  std::int64_t op_name(socket& s, const platform::io_request& r, bool peer);
  step op_accept(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_connect(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_stream_receive(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_stream_send(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_datagram_receive(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_datagram_send(const std::shared_ptr<socket>& s, const platform::io_request& r);
  step op_poll(const std::shared_ptr<socket>& s, const platform::io_request& r);
  std::int64_t op_shutdown(const std::shared_ptr<socket>& s, int how);
  void close_socket(const std::shared_ptr<socket>& s);
  void reset_connection(const std::shared_ptr<socket>& s);
  void peer_gone(const std::shared_ptr<socket>& s, int error);
  void fail_all(std::deque<pending_op>& queue, std::int64_t result);
  // Takes the waiting operations `ids` out of their queues and finishes them with `result`.
  void fail_waiting(const std::vector<std::uint64_t>& ids, std::int64_t result);
  std::optional<instant> readable_at(const socket& s);
  std::shared_ptr<socket> find_target(int type, const address& a, int& error);
  int bind_to(const std::shared_ptr<socket>& s, address a);
  int bind_ephemeral(const std::shared_ptr<socket>& s);
  std::shared_ptr<socket> find_bound(int type, const address& a);
  std::string port_key(int type, const address& a) const;
  bool port_taken(const std::string& key, bool reuse_port);
  void claim_port(const std::string& key, const std::shared_ptr<socket>& s);
  void release_port(const std::string& key, const socket& s);
  std::shared_ptr<socket> port_owner(const std::string& key, bool listening, const address& to);

  // ---- files (files.cpp) --------------------------------------------------------------------
  std::int64_t op_openat(const platform::io_request& r);
  step op_file_read(open_file& f, const platform::io_request& r);
  step op_file_write(open_file& f, const platform::io_request& r);
  std::int64_t op_fsync(open_file& f);
  std::int64_t op_statx(const platform::io_request& r);
  std::int64_t op_ftruncate(open_file& f, const platform::io_request& r);
  std::int64_t op_unlinkat(const platform::io_request& r);
  std::int64_t op_renameat(const platform::io_request& r);
  int resize(inode& n, std::uint64_t size);
  int path_of(int dirfd, const char* path, std::string& out);

  std::deque<host_state> hosts_;
  host_state* here_ = nullptr;
  std::uint32_t here_index_ = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, link_conditions> links_;
  // Every socket by id, for what a link change touches (pruned of closed ones as it grows).
  std::map<std::uint64_t, std::weak_ptr<socket>> sockets_;
  std::size_t sockets_prune_at_ = 64;
  std::uint64_t next_op_id_ = 0;
  std::uint64_t next_message_ = 0;  // ids of messages between hosts, for traces
  std::uint64_t next_socket_id_ = 0;
  std::uint64_t next_inode_ = 0;
  std::uint64_t schedule_sequence_ = 0;
  std::uint16_t next_ephemeral_ = ephemeral_port_first;

  // Where each waiting operation waits, by its id (op.driver_slot), for cancel.
  struct waiting_place {
    std::shared_ptr<socket> where;
    std::deque<pending_op> socket::*queue = nullptr;
    endpoint* owner = nullptr;
    std::uint32_t host = 0;
  };
  std::map<std::uint64_t, waiting_place> waiting_;
  // Every operation submitted and not yet delivered, waiting or scheduled. Only looked up, never
  // iterated, so its pointer hashing cannot steer a run.
  std::unordered_set<const platform::io_operation*> held_;

  // Bound sockets by "type/family/port" or "type/unix/path" (abstract names); AF_UNIX filesystem
  // names live in files_ (below) as socket nodes instead, as bind(2) creates them. Several
  // sockets share a key only when all set SO_REUSEPORT; they are kept in binding order.
  std::map<std::string, std::vector<std::weak_ptr<socket>>> bound_;


  std::deque<std::shared_ptr<socket>> dirty_;        // sockets whose queues to serve, in order
  std::deque<std::shared_ptr<endpoint>> to_wake_;   // endpoints with new completions
};

}  // namespace weft::sim::io
