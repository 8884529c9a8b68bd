// weft/sim/host.hpp — simulated machines: what a scenario boots, crashes, restarts and cuts off.
//
// A host has its own network address, ports and loopback, its own disk (file system) and fd
// table (docs/simulator.md, "Hosts and the network between them"). Every simulated thread runs on
// one host: the scenario's own threads on host 0 ("main"), a thread started by another on its
// creator's host, and a host's software on that host from context::boot or context::start_on.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace weft::sim {

namespace detail {
class host_table;
}  // namespace detail

// A handle on one host of the run (context::add_host, context::this_host).
struct host {
  std::uint32_t id = 0;  // 0: the scenario's own host; others in the order they were added
  std::string name;

  // The host's network address, as text: 10.0.0.(id+1) and fd00::(id+1), written in hex.
  std::string ipv4() const;
  std::string ipv6() const;
};

// One incarnation of a host's software: what context::boot hands the host's main.
class host_process {
 public:
  host_process(sim::host h, std::uint32_t life) : host_(std::move(h)), life_(life) {}
  host_process(const host_process&) = delete;
  host_process& operator=(const host_process&) = delete;

  const sim::host& where() const noexcept { return host_; }
  // 1 for the host's first boot, 2 after its first restart, and so on.
  std::uint32_t life() const noexcept { return life_; }

  // What a crash does to this process's own threads, after the simulated kernel has cut them off
  // (their descriptors closed, every later call failing EIO): end them at once without running
  // the service's logic, typically a runtime's request_stop (its tasks are cancelled where they
  // wait). Called on the scenario's thread; the crash then waits for main to return. Set it
  // before main blocks: one set after the crash (main had not got that far) runs at once, here.
  void on_crash(std::function<void()> kill) {
    kill_ = std::move(kill);
    if (crashed_ && kill_) kill_();
  }
  // What a graceful shutdown does: start the service's own stop protocol. Called on the
  // scenario's thread; the shutdown then waits for main to return. One set after the shutdown
  // was asked for runs at once, here.
  void on_shutdown(std::function<void()> stop) {
    stop_ = std::move(stop);
    if (stopping_ && stop_) stop_();
  }

 private:
  friend class detail::host_table;
  sim::host host_;
  std::uint32_t life_;
  std::function<void()> kill_;
  std::function<void()> stop_;
  bool crashed_ = false;
  bool stopping_ = false;
};

}  // namespace weft::sim
