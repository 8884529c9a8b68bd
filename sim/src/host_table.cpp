// host_table.cpp — booting, crashing and shutting down hosts, and changing the links between
// them (host_table.hpp, world.hpp).
#include "host_table.hpp"

#include <cstdio>
#include <utility>

#include <weft/sim/engine.hpp>

#include "io/address.hpp"
#include "io/world.hpp"

namespace weft::sim {

std::string host::ipv4() const { return "10.0.0." + std::to_string(id + 1); }

std::string host::ipv6() const {
  char last[8];
  std::snprintf(last, sizeof last, "%x", static_cast<unsigned>(id + 1));
  return "fd00::" + std::string(last);
}

namespace detail {

namespace {

std::string where(const platform::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

// Unparks the loops whose requests the kernel's last step finished: after the step, since
// unparking is a scheduling point.
void wake_loops(io::world& w) {
  while (const std::shared_ptr<io::endpoint> e = w.take_wake(nullptr)) e->parker().unpark();
}

}  // namespace

host_table::host_table(engine& e) : engine_(e) { hosts_.push_back(record{host{0, "main"}, true, 1, nullptr, {}}); }

host_table::~host_table() = default;

void host_table::usage(const std::string& what, const platform::source_location& loc) {
  engine_.fail("usage: " + what + " (at " + where(loc) + ")");
}

host_table::record* host_table::find(const host& h, const char* call, const platform::source_location& loc) {
  if (h.id >= hosts_.size() || hosts_[h.id].handle.name != h.name) {
    usage(std::string(call) + " names host '" + h.name + "', which this run does not have", loc);
    return nullptr;
  }
  return &hosts_[h.id];
}

host_table::record* host_table::find_running(const host& h, const char* call, const platform::source_location& loc) {
  record* r = find(h, call, loc);
  if (r != nullptr && !r->up) {
    usage(std::string(call) + " of host '" + h.name + "', which is not running", loc);
    return nullptr;
  }
  return r;
}

host_table::record* host_table::find_stoppable(const host& h, const char* call, const platform::source_location& loc) {
  record* r = find_running(h, call, loc);
  if (r == nullptr) return nullptr;
  // The scenario's own host has no process to stop, and a host's own thread cannot stop its
  // host: the stop waits for the host's main, which would wait for itself.
  if (h.id == 0) {
    usage(std::string(call) + " of host 'main', where the scenario itself runs", loc);
    return nullptr;
  }
  if (const detail::fiber_record* self = engine_.running(); self != nullptr && self->host == h.id) {
    usage(std::string(call) + " of host '" + h.name +
              "' from one of its own threads (a host is stopped from the scenario or from another host)",
          loc);
    return nullptr;
  }
  return r;
}

std::optional<host> host_table::add(std::string_view name, const platform::source_location& loc) {
  if (name.empty()) {
    usage("add_host with an empty name", loc);
    return std::nullopt;
  }
  for (const record& r : hosts_) {
    if (r.handle.name == name) {
      usage("add_host('" + std::string(name) + "'): the run already has a host of that name", loc);
      return std::nullopt;
    }
  }
  if (hosts_.size() >= io::hosts_max) {
    usage("add_host('" + std::string(name) + "'): a run holds at most " + std::to_string(io::hosts_max) + " hosts", loc);
    return std::nullopt;
  }
  const host h{static_cast<std::uint32_t>(hosts_.size()), std::string(name)};
  hosts_.push_back(record{h, false, 0, nullptr, {}});
  engine_.io_world().add_host(h.id);
  if (h.id == 1) engine_.name_host(0, hosts_.front().handle.name);
  engine_.name_host(h.id, h.name + " " + h.ipv4());
  engine_.world_event("host " + h.name + " added at " + h.ipv4());
  return h;
}

bool host_table::place_next_spawn(const host& h, const platform::source_location& loc) {
  if (find(h, "start_on", loc) == nullptr) return false;
  engine_.spawn_next_on(h.id, engine_.io_world().incarnation(h.id));
  return true;
}

void host_table::boot(const host& h, std::function<void(host_process&)> main, const platform::source_location& loc) {
  record* r = find(h, "boot", loc);
  if (r == nullptr) return;
  if (h.id == 0) {
    usage("boot of host 'main', where the scenario itself runs", loc);
    return;
  }
  if (r->up) {
    usage("boot of host '" + h.name + "', which is running (crash or shut it down first)", loc);
    return;
  }
  if (!main) {
    usage("boot of host '" + h.name + "' without a main", loc);
    return;
  }
  r->up = true;
  r->process = std::make_shared<host_process>(h, ++r->lives);
  engine_.world_event("host " + h.name + " boots (life " + std::to_string(r->lives) + ")");
  // The placement holds until a start succeeds: a start the fault plan fails spawns nothing.
  engine_.spawn_next_on(h.id, engine_.io_world().incarnation(h.id));
  for (int attempt = 1;; ++attempt) {
    try {
      // A copy of main per attempt: a start that fails destroys the lambda it was given.
      r->main = platform::thread([process = r->process, body = main]() mutable { body(*process); });
      return;
    } catch (const std::system_error&) {
      if (attempt < thread_start_attempts) continue;
      engine_.forget_next_spawn();  // a fault plan near 1: the caller's next thread stays home
      throw;
    }
  }
}

void host_table::stop(record& r, bool crashed) {
  const std::shared_ptr<host_process> process = r.process;
  r.up = false;
  (crashed ? process->crashed_ : process->stopping_) = true;
  // A main that has not set its hook yet runs it when it does (host_process::on_crash).
  if (std::function<void()>& hook = crashed ? process->kill_ : process->stop_) hook();
  if (r.main.joinable()) r.main.join();
  r.process.reset();
}

void host_table::crash(const host& h, const platform::source_location& loc) {
  record* r = find_stoppable(h, "crash", loc);
  if (r == nullptr) return;
  io::world& w = engine_.io_world();
  w.crash_host(h.id);
  engine_.world_event("host " + h.name + " crashed");
  wake_loops(w);  // the kernel failed what its threads waited for
  stop(*r, true);
}

void host_table::shutdown(const host& h, const platform::source_location& loc) {
  record* r = find_stoppable(h, "shutdown", loc);
  if (r == nullptr) return;
  engine_.world_event("host " + h.name + " shuts down");
  stop(*r, false);
}

bool host_table::running(const host& h) const { return h.id < hosts_.size() && hosts_[h.id].up; }

void host_table::change_link(const host& from, const host& to, link_change what, bool both_ways,
                             const platform::source_location& loc) {
  static constexpr const char* names[] = {"partition", "repair", "hold", "release"};
  const char* name = names[static_cast<int>(what)];
  if (find(from, name, loc) == nullptr || find(to, name, loc) == nullptr) return;
  if (from.id == to.id) {
    usage(std::string(name) + " of host '" + from.name + "' from itself", loc);
    return;
  }
  io::world& w = engine_.io_world();
  for (int pass = 0; pass < (both_ways ? 2 : 1); ++pass) {
    const std::uint32_t a = pass == 0 ? from.id : to.id;
    const std::uint32_t b = pass == 0 ? to.id : from.id;
    io::link_conditions& l = w.link(a, b);
    switch (what) {
      case link_change::cut: l.cut = true; break;
      case link_change::hold: l.held = true; break;
      case link_change::repair: l.cut = false; break;
      case link_change::release: l.held = false; break;
    }
    if (!l.cut && !l.held) w.link_opened(a, b);
  }
  engine_.world_event(std::string(name) + " " + from.name + (both_ways ? " <-> " : " -> ") + to.name);
  wake_loops(w);
}

void host_table::set_latency(const host& a, const host& b, duration low, duration high,
                             const platform::source_location& loc) {
  if (find(a, "set_latency", loc) == nullptr || find(b, "set_latency", loc) == nullptr) return;
  if (a.id == b.id) {
    usage("set_latency between host '" + a.name + "' and itself", loc);
    return;
  }
  if (low < duration::zero() || high < low || high > io::link_latency_limit) {
    usage("set_latency(" + a.name + ", " + b.name + "): the range must satisfy 0 <= low <= high <= " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(io::link_latency_limit).count()) + " s",
          loc);
    return;
  }
  io::world& w = engine_.io_world();
  for (io::link_conditions* l : {&w.link(a.id, b.id), &w.link(b.id, a.id)}) {
    l->latency_min = low;
    l->latency_max = high;
  }
}

std::size_t host_table::reset_connections(const host& a, const host& b, const platform::source_location& loc) {
  if (find(a, "reset_connections", loc) == nullptr || find(b, "reset_connections", loc) == nullptr) return 0;
  if (a.id == b.id) {
    usage("reset_connections between host '" + a.name + "' and itself", loc);
    return 0;
  }
  io::world& w = engine_.io_world();
  const std::size_t n = w.reset_between(a.id, b.id);
  engine_.world_event("reset " + std::to_string(n) + " connections " + a.name + " <-> " + b.name);
  wake_loops(w);
  return n;
}

void host_table::end_of_scenario() {
  for (record& r : hosts_) {
    if (r.handle.id == 0 || !r.up) continue;
    crash(r.handle, platform::source_location::current());
  }
}

}  // namespace detail
}  // namespace weft::sim
