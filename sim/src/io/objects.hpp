// objects.hpp — what a virtual fd of the simulated kernel refers to: an open file (an in-memory
// inode and a position) or a socket. Only the world (world.hpp) and its operations touch them,
// always between two scheduling points, so none of this is shared in the runtime's sense.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <weft/platform/clock.hpp>
#include <weft/platform/io_request.hpp>

#include "address.hpp"
#include "endpoint.hpp"

namespace weft::sim::io {

// Bytes a stream socket holds received and unread; a sender waits for room beyond it.
inline constexpr std::size_t stream_buffer_bytes_max = std::size_t{256} << 10;
// Datagrams a socket holds unread: UDP drops the next one, AF_UNIX makes its sender wait.
inline constexpr std::size_t datagram_queue_max = 64;
// The largest datagram (UDP's limit over IPv4).
inline constexpr std::size_t datagram_bytes_max = 65'507;
// Connections a listener holds unaccepted (Linux's somaxconn): listen() clamps its backlog to it.
inline constexpr std::size_t listen_backlog_max = 4'096;
// A disk crash tears a file's unsynced writes at a boundary of this many bytes.
inline constexpr std::size_t disk_sector_bytes = 512;

struct socket;

struct inode {
  inode(std::uint64_t n, std::uint64_t& total) noexcept : number(n), file_system_bytes(&total) {}
  inode(const inode&) = delete;
  inode& operator=(const inode&) = delete;
  // An unlinked file's bytes count until its last open description goes.
  ~inode() { *file_system_bytes -= bytes.size(); }

  std::uint64_t number = 0;
  std::vector<char> bytes;           // what reads see (the page cache)
  std::vector<char> synced;          // what a disk crash keeps: the bytes of the last fsync
  std::uint64_t* file_system_bytes;  // the world's total, which `bytes` count in
};

struct open_file {
  std::shared_ptr<inode> node;
  std::uint64_t position = 0;
  bool readable = false;
  bool writable = false;
  bool append = false;
};

// A submitted operation the kernel cannot finish yet. `subject` is the socket it acts for; it
// waits in a queue of `subject` or of another socket (a connect on its listener, an AF_UNIX
// datagram on its full receiver).
struct pending_op {
  std::uint64_t id = 0;
  std::uint32_t host = 0;  // whose kernel the operation was submitted to
  platform::io_operation* op = nullptr;
  std::shared_ptr<endpoint> owner;
  std::shared_ptr<socket> subject;
};

// When a message from another host reaches its socket; `held` while its link holds it.
inline constexpr instant held = instant::max();

struct datagram {
  address from;
  std::vector<char> bytes;
  instant at{};              // arrival
  std::uint64_t message = 0;  // its id in traces, when it came from another host
};

// Bytes of a stream that arrive together: `inbound` is these segments, in order.
struct segment {
  std::size_t bytes = 0;
  instant at{};
  std::uint64_t message = 0;  // its id in traces, when it came from another host
};

enum class direction : std::uint8_t { in = 0, out = 1 };

struct socket {
  std::uint64_t id = 0;  // creation rank in the run: names the socket's completion channels
  std::uint32_t host = 0;  // the host whose kernel holds it
  int domain = 0;        // AF_INET, AF_INET6, AF_UNIX
  int type = 0;          // SOCK_STREAM, SOCK_DGRAM
  address local;
  address remote;
  bool bound = false;
  bool listening = false;
  bool connected = false;  // stream: a connection was made; datagram: a default peer is set
  bool closed = false;
  bool reuse_port = false;  // SO_REUSEPORT: may share its port with others that set it
  std::size_t backlog = 0;

  // Stream: `peer` is the other end while both are open (each clears the other's on close).
  std::weak_ptr<socket> peer;
  std::deque<char> inbound;        // received (or on the way from another host), not read yet
  std::deque<segment> segments;    // when each part of `inbound` arrives, in stream order
  instant last_arrival{};          // the latest arrival given: a later send never arrives earlier
  bool inbound_eof = false;        // the peer shut down writing or closed: end after the bytes
  instant eof_at{};                // when that end arrives
  bool read_shut = false;          // shutdown(SHUT_RD): reads see the end of the stream
  bool write_shut = false;         // shutdown(SHUT_WR): sends fail EPIPE
  bool peer_stopped_reading = false;  // the peer shut down reading or closed: sends fail EPIPE
  // Half-open: the peer's host crashed behind a cut or held link. Sends vanish and reads wait,
  // until the link opens and the reset arrives.
  bool reset_when_open = false;
  int pending_error = 0;           // ECONNRESET, reported once by the next data operation
  std::deque<std::shared_ptr<socket>> accept_queue;  // listener: connected, not accepted yet
  instant connected_at{};  // accepted end: when the connection reaches its listener

  // Datagram.
  std::deque<datagram> datagrams;

  // Operations waiting, each queue served in arrival order.
  std::deque<pending_op> readers;     // recv/read/recvmsg/accept on this socket
  std::deque<pending_op> writers;     // send/write/sendmsg on this stream socket
  std::deque<pending_op> connectors;  // connects to this listener while its backlog is full
  std::deque<pending_op> senders;     // AF_UNIX datagrams to this socket while its queue is full
  std::deque<pending_op> pollers;     // poll on this socket
  bool dirty = false;                 // queued in the world's settle list

  // The latest due time given to a completion of each direction: later ones are never earlier.
  instant last_due[2]{};
};

}  // namespace weft::sim::io
