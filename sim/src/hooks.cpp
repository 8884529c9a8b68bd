// hooks.cpp — the seam's sim flavor forwards to the engine of the calling OS thread's run.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <weft/sim/engine.hpp>
#include <weft/sim/hooks.hpp>

namespace weft::sim::detail {

namespace {
// Slots used outside any fiber (static initialisation, the runner between runs).
thread_local std::vector<void*> outside_slots;
}  // namespace

void yield_point(const char* op, const weft::platform::source_location& loc, bool explicit_yield) noexcept {
  if (engine* e = engine::current()) e->yield_point(op, loc, explicit_yield);
}

wake_reason wait(wait_list& list, const char* op, const weft::platform::source_location& loc, const time_point* deadline) {
  engine* e = engine::current();
  if (e == nullptr || e->running() == nullptr) {
    std::fprintf(stderr, "weft sim: %s at %s:%u blocks outside a simulated thread; nothing could wake it\n", op,
                 loc.file_name(), loc.line());
    std::abort();
  }
  return e->wait(list, op, loc, deadline);
}

std::size_t notify_one(wait_list& list) noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->notify_one(list) : 0;
}

std::size_t notify_all(wait_list& list) noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->notify_all(list) : 0;
}

bool in_run() noexcept {
  engine* e = engine::current();
  return e != nullptr && e->running() != nullptr;
}

std::uint64_t current_fiber_id() noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->current_fiber_id() : 0;
}

unsigned cores() noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->cores() : 1;
}

time_point now() noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->now() : engine::epoch();
}

std::uint64_t entropy() noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->entropy() : 0x5eed5eed5eed5eedULL;
}

bool fault_point(std::uint8_t kind, const char* name, const weft::platform::source_location& loc) noexcept {
  engine* e = engine::current();
  return e != nullptr && e->fault_point(kind, name, loc);
}

bool buggify(std::string_view name) noexcept {
  engine* e = engine::current();
  return e != nullptr && e->buggify(name);
}

void probe_hit(const weft::platform::probe_site& site) noexcept {
  if (engine* e = engine::current()) e->probe_hit(site);
}

host_tag current_host() noexcept {
  engine* e = engine::current();
  if (e == nullptr || e->running() == nullptr) return {};
  return {e->running()->host, e->running()->incarnation};
}

void trace_message(bool arrival, std::uint64_t id, std::uint32_t host, std::string_view text) noexcept {
  engine* e = engine::current();
  if (e == nullptr || e->running() == nullptr) return;
  e->message_event(arrival, id, host, std::string(text));
}

io::world* io_world() noexcept {
  engine* e = engine::current();
  return e != nullptr && e->running() != nullptr ? &e->io_world() : nullptr;
}

io::world* existing_io_world() noexcept {
  engine* e = engine::current();
  return e != nullptr && e->running() != nullptr ? e->existing_io_world() : nullptr;
}

bool io_fault(std::uint8_t kind, const char* name) noexcept {
  engine* e = engine::current();
  return e != nullptr && e->io_fault(kind, name);
}

std::uint64_t fault_draw(std::uint64_t bound) noexcept {
  engine* e = engine::current();
  return e != nullptr ? e->fault_draw(bound) : 0;
}

void trace_note(const char* text) noexcept {
  engine* e = engine::current();
  if (e != nullptr && e->running() != nullptr) e->note(text);
}

void trace_task(std::uint8_t event, const char* name, const void* cell, std::uint64_t id,
                const char* detail) noexcept {
  if (engine* e = engine::current()) e->trace_task(event, name, cell, id, detail);
}

void assertion_failed(const char* condition, const char* file, int line) noexcept {
  if (engine* e = engine::current(); e != nullptr && e->running() != nullptr) {
    e->assertion_failed(condition, file, line);  // does not return
  }
  std::fprintf(stderr, "weft: assertion failed: %s at %s:%d\n", condition, file, line);
  std::fflush(stderr);
  std::abort();
}

void stop_run(const char* what) noexcept {
  if (engine* e = engine::current(); e != nullptr && e->running() != nullptr) {
    e->stop_run(what);  // does not return
  }
  std::fprintf(stderr, "weft sim: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

void report_failure(const char* what, const weft::platform::source_location& loc) noexcept {
  const std::string site = std::string(sim::basename_of(loc.file_name())) + ":" + std::to_string(loc.line());
  if (engine* e = engine::current()) {
    e->fail(std::string(what) + " at " + site);
  } else {
    std::fprintf(stderr, "weft sim: %s at %s\n", what, site.c_str());
  }
}

fiber_record* spawn(std::function<void()> fn, const weft::platform::source_location& loc) {
  engine* e = engine::current();
  if (e == nullptr) throw std::logic_error("weft sim: platform::thread started outside a simulation run");
  return e->spawn(std::move(fn), loc);
}

void join(fiber_record* fiber, const weft::platform::source_location& loc) {
  if (engine* e = engine::current()) e->join(fiber, loc);
}

void detach(fiber_record* fiber) noexcept {
  if (engine* e = engine::current()) e->detach(fiber);
}

void drop_joinable(fiber_record* fiber) noexcept {
  if (engine* e = engine::current()) e->drop_joinable(fiber);
}

std::size_t slot_allocate() noexcept {
  static std::atomic<std::size_t> next{0};
  // relaxed: only uniqueness matters; slot indices never steer a run.
  return next.fetch_add(1, std::memory_order_relaxed);
}

void*& slot(std::size_t index) noexcept {
  engine* e = engine::current();
  fiber_record* f = e != nullptr ? e->running() : nullptr;
  std::vector<void*>& slots = f != nullptr ? f->slots : outside_slots;
  if (slots.size() <= index) slots.resize(index + 1, nullptr);
  return slots[index];
}

}  // namespace weft::sim::detail
