// world.hpp — the simulated kernel one simulation run shares between all its loops: virtual fds,
// an in-memory loopback network (TCP, UDP, AF_UNIX stream and datagram) and an in-memory file
// system. The engine creates it at the run's first I/O and destroys it with the run, so no fd,
// byte or port reaches the next seed.
//
// Every entry point (submit, execute, cancel, cancel_all) runs to its end without a scheduling
// point: the simulated threads see each system call as one step. An operation either finishes
// at once, or waits in a queue of the socket it needs (readable bytes, room, a connection) and
// finishes when a later step changes that socket; `settle()` serves those queues after each
// step, in the order the sockets changed. A finished operation is scheduled on its driver's
// endpoint with a due time (now, or later under the io_latency fault); the endpoints to wake
// are collected and the driver unparks them after the step (take_wake), since unparking is a
// scheduling point.
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

#include <weft/platform/io_request.hpp>

#include "endpoint.hpp"
#include "objects.hpp"

namespace weft::sim::io {

// fds the simulated process may hold at once (EMFILE beyond).
inline constexpr std::size_t open_fds_max = 1'024;
// The first fd handed out: 0-2 stand for the standard streams, which the simulator does not model.
inline constexpr int first_fd = 3;
// Ports that port 0 (and an unbound connect, send or listen) picks from, in order.
inline constexpr std::uint16_t ephemeral_port_first = 32'768;
inline constexpr std::uint16_t ephemeral_port_last = 60'999;
// The largest regular file, and all files' bytes together (EFBIG, ENOSPC beyond).
inline constexpr std::uint64_t file_bytes_max = std::uint64_t{16} << 20;
inline constexpr std::uint64_t file_system_bytes_max = std::uint64_t{64} << 20;
// One file read in this many misses the simulated page cache and goes through submit().
inline constexpr std::uint64_t page_cache_miss_one_in = 2;
// The longest path (ENAMETOOLONG beyond), as PATH_MAX.
inline constexpr std::size_t path_bytes_max = 4'096;

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

  // Regular files open in any descriptor (a disk crash needs none: the process is gone).
  std::size_t open_files() const;
  // A crash of the disk (files.cpp): each file keeps what its last fsync made durable, plus the
  // first sectors of its unsynced contents, their count drawn from the fault stream (all, some
  // or none: a torn write). Names stay as they are. Returns how many files lost bytes.
  std::size_t crash_disk();

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
  };
  static step finished(std::int64_t result) {
    step s;
    s.result = result;
    return s;
  }
  static step wait_in(std::shared_ptr<socket> where, std::deque<pending_op> socket::*queue) {
    step s;
    s.done = false;
    s.where = std::move(where);
    s.queue = queue;
    return s;
  }
  static step on_channel(std::int64_t result, socket& s, direction d) {
    step out = finished(result);
    out.channel_of = &s;
    out.dir = d;
    return out;
  }

  // ---- the core (world.cpp) -----------------------------------------------------------------
  step attempt(const platform::io_request& r, pending_op* waiting);
  void finish(pending_op& p, const step& s);
  void enqueue(pending_op p, const step& s);
  void serve(socket& s, std::deque<pending_op> socket::*queue, bool in_order);
  void settle();
  void touch(const std::shared_ptr<socket>& s);
  descriptor* lookup(int fd);
  int allocate_fd(descriptor d);

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
  std::shared_ptr<socket> find_target(int type, const address& a, int& error);
  int bind_to(const std::shared_ptr<socket>& s, address a);
  int bind_ephemeral(const std::shared_ptr<socket>& s);
  std::shared_ptr<socket> find_bound(int type, const address& a);
  std::string port_key(int type, const address& a) const;
  bool port_taken(const std::string& key, bool reuse_port);
  void claim_port(const std::string& key, const std::shared_ptr<socket>& s);
  void release_port(const std::string& key, const socket& s);
  std::shared_ptr<socket> port_owner(const std::string& key, bool listening);

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

  std::map<int, descriptor> fds_;
  std::uint64_t next_op_id_ = 0;
  std::uint64_t next_socket_id_ = 0;
  std::uint64_t next_inode_ = 0;
  std::uint64_t schedule_sequence_ = 0;
  std::uint16_t next_ephemeral_ = ephemeral_port_first;

  // Where each waiting operation waits, by its id (op.driver_slot), for cancel.
  struct waiting_place {
    std::shared_ptr<socket> where;
    std::deque<pending_op> socket::*queue = nullptr;
    endpoint* owner = nullptr;
  };
  std::map<std::uint64_t, waiting_place> waiting_;
  // Every operation submitted and not yet delivered, waiting or scheduled. Only looked up, never
  // iterated, so its pointer hashing cannot steer a run.
  std::unordered_set<const platform::io_operation*> held_;

  // Bound sockets by "type/family/port" or "type/unix/path" (abstract names); AF_UNIX filesystem
  // names live in files_ (below) as socket nodes instead, as bind(2) creates them. Several
  // sockets share a key only when all set SO_REUSEPORT; they are kept in binding order.
  std::map<std::string, std::vector<std::weak_ptr<socket>>> bound_;

  // The file system: a flat namespace of names (no directories), each a file or a socket name.
  struct fs_node {
    std::shared_ptr<inode> file;  // a regular file
    std::weak_ptr<socket> sock;   // else an AF_UNIX socket's name (expired: its socket closed)
  };
  std::map<std::string, fs_node> files_;
  std::uint64_t file_system_bytes_ = 0;

  std::deque<std::shared_ptr<socket>> dirty_;        // sockets whose queues to serve, in order
  std::deque<std::shared_ptr<endpoint>> to_wake_;   // endpoints with new completions
};

}  // namespace weft::sim::io
