// engine.cpp — the simulation engine and its Boost.Fiber scheduling algorithm (see engine.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/fixedsize_stack.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/properties.hpp>

#include <weft/platform/assert.hpp>
#include <weft/platform/buggify.hpp>
#include <weft/platform/trace.hpp>
#include <weft/sim/engine.hpp>
#include <weft/sim/strategy.hpp>

#include "fiber_sanitizer.hpp"
#include "io/world.hpp"

namespace weft::sim {

namespace {

thread_local engine* current_engine = nullptr;

// Stack of every simulated thread. Frames of weft tasks live on the heap; this holds the loop's
// turn, a poll and whatever the user's synchronous code needs.
constexpr std::size_t fiber_stack_bytes = 256 * 1024;

struct engine_properties final : boost::fibers::fiber_properties {
  explicit engine_properties(boost::fibers::context* ctx) : fiber_properties(ctx) {}
  detail::fiber_record* fiber = nullptr;  // null: the main or dispatcher context
};

// Boost.Fiber's view of the engine: every decision is delegated.
class engine_algorithm final : public boost::fibers::algo::algorithm_with_properties<engine_properties> {
 public:
  explicit engine_algorithm(engine* e) noexcept : engine_(e) {}

  void awakened(boost::fibers::context* ctx, engine_properties& props) noexcept override {
    engine_->on_awakened(ctx, props.fiber);
  }
  boost::fibers::context* pick_next() noexcept override { return engine_->pick_next(); }
  bool has_ready_fibers() const noexcept override { return engine_->has_ready(); }
  // Called by the dispatcher when pick_next() found nothing: every fiber is blocked. The real
  // time point is ignored: nothing in a run sleeps on the real clock.
  void suspend_until(const std::chrono::steady_clock::time_point&) noexcept override { engine_->on_idle(); }
  void notify() noexcept override {}
  boost::fibers::fiber_properties* new_properties(boost::fibers::context* ctx) override {
    auto* props = new engine_properties(ctx);
    props->fiber = engine_->take_pending_spawn(ctx);
    return props;
  }

 private:
  engine* engine_;
};

// The trace renderers run for every recorded event, so they avoid per-character appends and
// repeated scans.
void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  char* const end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out.append(p, static_cast<std::size_t>(end - p));
}
void append_int(std::string& out, std::int64_t v) {
  if (v < 0) {
    out.push_back('-');
    append_uint(out, static_cast<std::uint64_t>(-(v + 1)) + 1);
  } else {
    append_uint(out, static_cast<std::uint64_t>(v));
  }
}
// Per string-literal pointer (a source_location's file name, an operation or fault name: always
// literals, static and constant; a computed name must not be passed as `op`), remembered:
// its basename (for file names) and the FNV-1a of that text. The same few pointers come back at
// every event; the cache is direct-mapped, a collision only costs a rescan. The hash is of the
// text, never of the pointer, so it is the same in every build.
struct literal_info {
  const char* ptr = nullptr;
  std::string_view text;
  std::uint64_t hash = 0;
};
const literal_info& literal(const char* ptr, bool basename) noexcept {
  thread_local std::array<literal_info, 128> cache{};
  const std::size_t i = ((reinterpret_cast<std::uintptr_t>(ptr) >> 3) * 2 + (basename ? 1 : 0)) % cache.size();
  literal_info& s = cache[i];
  if (s.ptr != ptr) {
    s.ptr = ptr;
    s.text = basename ? basename_of(ptr) : std::string_view(ptr);
    fnv1a h;
    h.add(s.text);
    s.hash = h.value();
  }
  return s;
}
std::string_view cached_basename(const char* path) noexcept { return literal(path, true).text; }

void append_site(std::string& out, const weft::platform::source_location& loc) {
  out += cached_basename(loc.file_name());
  out.push_back(':');
  append_uint(out, loc.line());
}

const char* kind_name(event_kind k) noexcept {
  switch (k) {
    case event_kind::spawn: return "spawn";
    case event_kind::run: return "run";
    case event_kind::yield: return "yield";
    case event_kind::block: return "block";
    case event_kind::wake: return "wake";
    case event_kind::time: return "time";
    case event_kind::fault: return "fault";
    case event_kind::note: return "note";
    case event_kind::exit: return "exit";
    case event_kind::fail: return "fail";
    case event_kind::task: return "task";
    case event_kind::world: return "world";
    case event_kind::message: return "message";
  }
  return "?";
}

}  // namespace

engine* engine::current() noexcept { return current_engine; }

instant engine::epoch() noexcept { return instant(std::chrono::seconds(1)); }

engine::engine(std::uint64_t seed, const options& o)
    : seed_(seed),
      options_(resolve(o, seed)),
      schedule_rng_(0),
      fault_rng_(0),
      scenario_rng_(0),
      entropy_rng_(0),
      now_(epoch()) {
  std::uint64_t split = seed;
  schedule_rng_ = platform::random(platform::random::splitmix64(split));
  fault_rng_ = platform::random(platform::random::splitmix64(split));
  scenario_rng_ = platform::random(platform::random::splitmix64(split));
  entropy_rng_ = platform::random(platform::random::splitmix64(split));
  strategy_ = make_strategy(options_, schedule_rng_);
  effective_options_ = describe(options_);
}

engine::~engine() = default;

std::int64_t engine::now_ns() const noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now_ - epoch()).count();
}

// ---- trace ------------------------------------------------------------------------------------

void engine::record_simple(event_kind kind, std::uint64_t fiber, std::uint64_t other, std::int64_t value,
                           const char* op, const weft::platform::source_location* loc, std::string text) {
  // The hash: the line's fields as values, in the line's order (see trace.hpp).
  const bool has_op = op != nullptr && op[0] != '\0';
  const bool has_until = kind == event_kind::block && value >= 0;
  hash_.add_word(steps_);
  hash_.add_word(static_cast<std::uint64_t>(now_ns()));
  hash_.add_word(static_cast<std::uint64_t>(kind) | (has_op ? trace_hash_word::has_op : 0) |
                 (loc != nullptr ? trace_hash_word::has_site : 0) | (has_until ? trace_hash_word::has_until : 0) |
                 (text.empty() ? 0 : trace_hash_word::has_text));
  if (kind == event_kind::time) {
    hash_.add_word(static_cast<std::uint64_t>(value));
  } else if (kind != event_kind::fail) {
    hash_.add_word(fiber);
  }
  if (kind == event_kind::spawn || kind == event_kind::wake) hash_.add_word(other);
  if (kind == event_kind::message) {
    hash_.add_word(other);
    hash_.add_word(static_cast<std::uint64_t>(value));
  }
  if (has_op) hash_.add_word(literal(op, false).hash);
  if (loc != nullptr) {
    hash_.add_word(literal(loc->file_name(), true).hash);
    hash_.add_word(loc->line());
  }
  if (has_until) hash_.add_word(static_cast<std::uint64_t>(value));
  if (!text.empty()) {
    hash_.add(text);
    hash_.add_word(text.size());
  }
  if (!options_.record_trace) return;

  thread_local std::string line;
  line.clear();
  append_uint(line, steps_);
  line += " t=";
  append_int(line, now_ns());
  line.push_back(' ');
  line += kind_name(kind);
  switch (kind) {
    case event_kind::time:
      line += " -> ";
      append_int(line, value);
      break;
    case event_kind::fail:
      break;
    default:
      line += " f=";
      append_uint(line, fiber);
      break;
  }
  if (kind == event_kind::spawn || kind == event_kind::wake) {
    line += " by=";
    append_uint(line, other);
  }
  if (has_op) {
    line.push_back(' ');
    line += op;
  }
  if (kind == event_kind::message) {
    line += " id=";
    append_int(line, value);
    line += " host=";
    append_uint(line, other);
  }
  if (loc != nullptr) {
    line += " at=";
    append_site(line, *loc);
  }
  if (has_until) {
    line += " until=";
    append_int(line, value);
  }
  if (!text.empty()) {
    line.push_back(' ');
    line += text;
  }
  {
    trace_event e;
    e.step = steps_;
    e.kind = kind;
    e.fiber = fiber;
    e.other = other;
    e.value = value;
    e.now_ns = now_ns();
    e.op = op != nullptr ? op : "";
    e.line = line;
    if (kind == event_kind::world || kind == event_kind::message) e.detail = text;  // the Chrome label
    events_.push_back(std::move(e));
  }
}

// Line: "<step> t=<ns> task f=<fiber> <event> task=<n> id=<id>[ outcome=<o> | -> <result>]".
// As in record_simple, the hash takes the line's fields as values (the event name and detail are
// literals: their text's hash), and the line is rendered only when the trace is recorded.
void engine::record_task(std::uint64_t task, std::uint64_t id, std::uint8_t event, const char* name,
                         const char* detail) {
  const std::uint64_t fiber = current_fiber_id();
  hash_.add_word(steps_);
  hash_.add_word(static_cast<std::uint64_t>(now_ns()));
  hash_.add_word(trace_hash_word::task_event | event | (detail != nullptr ? trace_hash_word::has_detail : 0));
  hash_.add_word(fiber);
  hash_.add_word(literal(name, false).hash);
  hash_.add_word(task);
  hash_.add_word(id);
  if (detail != nullptr) hash_.add_word(literal(detail, false).hash);
  if (!options_.record_trace) return;

  thread_local std::string line;
  line.clear();
  append_uint(line, steps_);
  line += " t=";
  append_int(line, now_ns());
  line += " task f=";
  append_uint(line, fiber);
  line.push_back(' ');
  line += name;
  line += " task=";
  append_uint(line, task);
  line += " id=";
  append_uint(line, id);
  if (detail != nullptr) {
    line += event == static_cast<std::uint8_t>(platform::task_event::poll_end) ? " -> " : " outcome=";
    line += detail;
  }
  trace_event e;
  e.step = steps_;
  e.kind = event_kind::task;
  e.fiber = fiber;
  e.value = event;
  e.now_ns = now_ns();
  e.op = name;
  e.line = line;
  e.task = task;
  e.task_id = id;
  if (detail != nullptr) e.detail = detail;
  events_.push_back(std::move(e));
}

void engine::trace_task(std::uint8_t event, const char* name, const void* cell, std::uint64_t id,
                        const char* detail) noexcept {
  // Not a scheduling point: no step is counted and the strategy is not asked, so the schedule of
  // a seed is the same with or without trace points.
  if (running_ == nullptr || ending_) return;
  using platform::task_event;
  const auto kind = static_cast<task_event>(event);
  task_record* rec = nullptr;
  if (kind == task_event::spawned) {
    rec = &tasks_[cell];
    *rec = task_record{++task_count_, nullptr, false};
  } else {
    auto [it, inserted] = tasks_.try_emplace(cell);
    if (inserted) it->second.number = ++task_count_;  // created before the run traced it
    rec = &it->second;
  }
  switch (kind) {
    case task_event::outcome:
      rec->outcome = detail;
      break;
    case task_event::completed:
      rec->completed = true;
      if (detail == nullptr) detail = rec->outcome;
      break;
    case task_event::poll_end:
      if (detail == nullptr) detail = rec->completed ? "completed" : "suspended";
      break;
    default:
      break;
  }
  record_task(rec->number, id, event, name, detail);
}

void engine::note(std::string text) {
  record_simple(event_kind::note, current_fiber_id(), 0, 0, nullptr, nullptr, std::move(text));
}

void engine::world_event(std::string text) {
  record_simple(event_kind::world, current_fiber_id(), 0, 0, nullptr, nullptr, std::move(text));
}

void engine::message_event(bool arrival, std::uint64_t id, std::uint32_t host, std::string text) {
  record_simple(event_kind::message, current_fiber_id(), host, static_cast<std::int64_t>(id),
                arrival ? "arrive" : "send", nullptr, std::move(text));
}

void engine::name_host(std::uint32_t id, std::string name) {
  if (host_names_.size() <= id) host_names_.resize(id + 1);
  host_names_[id] = std::move(name);
}

void engine::fail(std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  const std::string first_line = message.substr(0, message.find('\n'));
  record_simple(event_kind::fail, current_fiber_id(), 0, 0, nullptr, nullptr, first_line);
  failures_.push_back(std::move(message));
}

void engine::start_liveness(duration fault_window, duration recovery_bound,
                            const weft::platform::source_location& loc) {
  const std::string site = std::string(loc.file_name()) + ":" + std::to_string(loc.line());
  if (recover_by_) {
    fail("usage: start_liveness called twice in one run (at " + site + ")");
    return;
  }
  if (fault_window < duration::zero() || recovery_bound <= duration::zero()) {
    fail("usage: start_liveness needs a fault window >= 0 and a recovery bound > 0 (at " + site + ")");
    return;
  }
  // Saturating: a window or bound past virtual time's range means "until the run ends".
  faults_until_ = weft::detail::deadline_after(now_, fault_window);
  recover_by_ = weft::detail::deadline_after(faults_until_, recovery_bound);
  note("liveness: faults stop at t=" + std::to_string((faults_until_ - epoch()).count()) + "ns, goal due by t=" +
       std::to_string((*recover_by_ - epoch()).count()) + "ns");
}

void engine::recovered(const weft::platform::source_location& loc) {
  if (!recover_by_) {
    fail("usage: recovered() without a liveness phase (start_liveness) (at " + std::string(loc.file_name()) + ":" +
         std::to_string(loc.line()) + ")");
    return;
  }
  if (recovered_) return;
  recovered_ = true;
  note("liveness: goal reached");
}

void engine::crash_disk(const weft::platform::source_location& loc) {
  if (!io_world_) {
    note("disk crash: no file was ever written");
    return;
  }
  const std::uint32_t host = running_ != nullptr ? running_->host : 0;
  if (const std::size_t open = io_world_->open_files(host); open != 0) {
    fail("usage: crash_disk with " + std::to_string(open) + " files open (at " + std::string(loc.file_name()) + ":" +
         std::to_string(loc.line()) + "); a crash ends the process, so stop the service and close its files first");
    return;
  }
  const std::size_t lost = io_world_->crash_disk(host);
  note("disk crash: " + std::to_string(lost) + " files lost unsynced writes");
}

void engine::record_param(std::string name, std::int64_t value) { params_[std::move(name)] = value; }

void engine::name_current(std::string name) {
  if (running_ == nullptr) return;
  running_->name = std::move(name);
  record_simple(event_kind::note, running_->id, 0, 0, nullptr, nullptr, "name=" + running_->name);
}

// ---- run control --------------------------------------------------------------------------------

void engine::execute(std::function<void()> root) {
  WEFT_ASSERT(current_engine == nullptr);
  current_engine = this;
  boost::fibers::use_scheduling_algorithm<engine_algorithm>(this);
  main_ctx_ = boost::fibers::context::active();
  announce_switches_ = detail::switches_announced();
  detail::fiber_record* first = spawn(std::move(root), weft::platform::source_location::current());
  first->name = "main";
  main_waiting_ = true;
  while (!ending_) {
    main_ctx_->suspend();  // woken by the last exit or by an abort
    arrived();
  }
  main_waiting_ = false;
  if (recover_by_ && !recovered_ && !aborted_) {
    fail("did not recover: the scenario ended without reaching its goal (context::recovered) after its fault window");
  }
  release_finished_fibers();
  // Replacing the algorithm drains it through pick_next() without switching: nothing to announce.
  announce_switches_ = false;
  boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();
  current_engine = nullptr;
}

run_result engine::result() && {
  run_result r;
  r.passed = failures_.empty();
  r.failures = std::move(failures_);
  r.trace_hash = hash_.value();
  r.steps = steps_;
  r.switches = switches_;
  r.fibers = fibers_.size();
  r.faults = faults_injected_;
  r.preemptions = preemptions_;
  r.params = std::move(params_);
  for (const auto& [site, hits] : probe_hits_) r.probe_hits[site->name] += hits;
  r.virtual_elapsed = now_ - epoch();
  r.effective_options = effective_options_;
  r.events = std::move(events_);
  r.fiber_names.push_back("simulator");
  for (const auto& f : fibers_) r.fiber_names.push_back(f.name);
  r.fiber_hosts.push_back(0);
  for (const auto& f : fibers_) r.fiber_hosts.push_back(f.host);
  r.host_names = std::move(host_names_);
  return r;
}

// Boost.Fiber frees a finished fiber (its context, properties and stack) only in its dispatcher's
// loop, and the dispatcher runs only when the algorithm hands it control: within a run, when every
// fiber is blocked (a virtual-time jump, a deadlock). A run that never gets there leaves its
// finished fibers queued, and a campaign of such runs would keep every one. So the main context
// yields once to the dispatcher here: it frees them and, main being the only ready context, hands
// control straight back.
void engine::release_finished_fibers() noexcept {
  WEFT_ASSERT(ending_);
  WEFT_ASSERT(running_ == nullptr);
  // The dispatcher is always ready when it does not run: it re-queues itself before every switch
  // away, and it is not running now (the main context is).
  WEFT_ASSERT(dispatcher_ready_ != nullptr);
  boost::fibers::context::active()->yield();  // pick_next(): the dispatcher, then main
  arrived();
  WEFT_ASSERT(dispatcher_ready_ != nullptr);
}

void engine::abort_run() noexcept {
  ending_ = true;
  aborted_ = true;
  forced_ = nullptr;
  for (auto* f : ready_) f->state = detail::fiber_state::abandoned;
  ready_.clear();
  for (auto& f : fibers_) {
    if (f.state == detail::fiber_state::blocked) f.state = detail::fiber_state::abandoned;
  }
  if (main_waiting_) boost::fibers::context::active()->schedule(main_ctx_);
}

void engine::assertion_failed(const char* condition, const char* file, int line) noexcept {
  std::string message = "assertion failed: ";
  message += condition;
  message += " at ";
  message += basename_of(file);
  message += ":" + std::to_string(line) + " (thread " + std::to_string(current_fiber_id()) + ")\n";
  message += describe_fibers();
  fail(std::move(message));
  abort_run();
  abandon_current();
}

void engine::stop_run(std::string message) noexcept {
  message += " (thread " + std::to_string(current_fiber_id()) + "); the run stops here\n";
  message += describe_fibers();
  fail(std::move(message));
  abort_run();
  abandon_current();
}

void engine::abandon_current() noexcept {
  WEFT_ASSERT(running_ != nullptr);
  running_->state = detail::fiber_state::abandoned;
  for (;;) {
    boost::fibers::context::active()->suspend();  // never scheduled again
    arrived();
  }
}

std::string engine::describe_fibers() const {
  std::string out;
  for (const auto& f : fibers_) {
    if (f.state == detail::fiber_state::finished) continue;
    out += "  thread ";
    append_uint(out, f.id);
    out += " (" + f.name + "): ";
    switch (f.state) {
      case detail::fiber_state::blocked:
      case detail::fiber_state::abandoned:
        if (f.block_op[0] != '\0' && f.waiting_on != nullptr) {
          out += "blocked in ";
          out += f.block_op;
          out += " at ";
          append_site(out, f.block_site);
          out += " (";
          out += f.block_site.function_name();
          out += ")";
        } else {
          out += "stopped";
        }
        break;
      case detail::fiber_state::ready: out += "ready"; break;
      case detail::fiber_state::running: out += "running"; break;
      case detail::fiber_state::finished: break;
    }
    out += "\n";
  }
  return out;
}

// ---- fibers ------------------------------------------------------------------------------------

detail::fiber_record* engine::spawn(std::function<void()> fn, const weft::platform::source_location& loc) {
  fibers_.emplace_back();
  detail::fiber_record* f = &fibers_.back();
  f->id = fibers_.size();
  f->name = "thread-" + std::to_string(f->id);
  if (running_ != nullptr) {
    const detail::host_tag where = running_->spawn_on.value_or(detail::host_tag{running_->host, running_->incarnation});
    running_->spawn_on.reset();
    f->host = where.host;
    f->incarnation = where.incarnation;
  }
  strategy_->on_spawn(*f);
  ++live_;
  record_simple(event_kind::spawn, f->id, current_fiber_id(), 0, nullptr, &loc);
  pending_spawn_ = f;
  boost::fibers::fiber fiber(boost::fibers::launch::post, std::allocator_arg,
                             detail::recording_stack(fiber_stack_bytes, &f->stack_bottom, &f->stack_size),
                             [this, f, body = std::move(fn)]() mutable { fiber_main(f, body); });
  WEFT_ASSERT(pending_spawn_ == nullptr);  // bound by new_properties() during the launch
  WEFT_ASSERT(f->ctx != nullptr);
  fiber.detach();  // the engine joins through fiber_record::joiners
  // Creating a thread is a scheduling point of the creator: the new thread may run first.
  if (running_ != nullptr) yield_point("thread.spawn", loc, false);
  return f;
}

detail::fiber_record* engine::take_pending_spawn(boost::fibers::context* ctx) noexcept {
  if (!ctx->is_context(boost::fibers::type::worker_context)) return nullptr;
  detail::fiber_record* f = std::exchange(pending_spawn_, nullptr);
  if (f != nullptr) f->ctx = ctx;
  return f;
}

void engine::fiber_main(detail::fiber_record* f, std::function<void()>& fn) noexcept {
  arrived();
  {
    std::function<void()> body = std::move(fn);  // destroyed here, while the fiber still counts
    try {
      body();
    } catch (const std::exception& e) {
      fail("thread " + std::to_string(f->id) + " (" + f->name + ") ended with an exception: " + e.what());
    } catch (...) {
      fail("thread " + std::to_string(f->id) + " (" + f->name + ") ended with a non-standard exception");
    }
  }
  fiber_exited(f);
}

void engine::fiber_exited(detail::fiber_record* f) noexcept {
  record_simple(event_kind::exit, f->id, 0, 0, nullptr, nullptr);
  f->state = detail::fiber_state::finished;
  WEFT_ASSERT(live_ > 0);
  --live_;
  notify_all(f->joiners);
  if (live_ == 0 && !ending_) {
    ending_ = true;
    if (main_waiting_) boost::fibers::context::active()->schedule(main_ctx_);
  }
}

void engine::join(detail::fiber_record* f, const weft::platform::source_location& loc) {
  if (f == nullptr) {
    fail("join of a thread that is not joinable at " + std::string(basename_of(loc.file_name())) + ":" +
         std::to_string(loc.line()));
    return;
  }
  f->joined_or_detached = true;
  yield_point("thread.join", loc, false);
  while (f->state != detail::fiber_state::finished) wait(f->joiners, "thread.join", loc, nullptr);
}

void engine::detach(detail::fiber_record* f) noexcept {
  if (f != nullptr) f->joined_or_detached = true;
}

void engine::drop_joinable(detail::fiber_record* f) noexcept {
  f->joined_or_detached = true;
  if (running_ == nullptr || ending_) return;
  // an OS thread object would call std::terminate here. Stopping the whole run is the faithful analogue,
  // and it matters: the dropping fiber is usually unwinding, destroying objects the dropped
  // thread still uses — letting anyone run on would be a use-after-free in the simulator.
  fail("thread " + std::to_string(f->id) + " (" + f->name +
       ") was dropped while joinable (an OS thread would call std::terminate); the run stops here\n" +
       describe_fibers());
  abort_run();
  abandon_current();
}

// ---- scheduling points -------------------------------------------------------------------------

void engine::yield_point(const char* op, const weft::platform::source_location& loc, bool explicit_yield) noexcept {
  detail::fiber_record* self = running_;
  if (self == nullptr || ending_) return;
  ++steps_;
  if (steps_ > options_.step_budget) {
    fail("livelock: the step budget (" + std::to_string(options_.step_budget) +
         " scheduling points) ran out; thread " + std::to_string(self->id) + " was at " + op + " " +
         std::string(basename_of(loc.file_name())) + ":" + std::to_string(loc.line()) + "\n" + describe_fibers());
    abort_run();
    abandon_current();
  }
  strategy_->on_step(steps_, *self);
  record_simple(event_kind::yield, self->id, 0, 0, op, &loc);
  if (ready_.empty()) return;
  const std::size_t pick = strategy_->choose(ready_, explicit_yield ? nullptr : self);
  if (pick == ready_.size()) return;  // the caller goes on
  if (!explicit_yield) {  // a preemption: the caller could have gone on
    if (preemptions_ >= options_.max_preemptions) return;
    ++preemptions_;
  }
  forced_ = ready_[pick];
  self->state = detail::fiber_state::ready;
  boost::fibers::context::active()->yield();  // pick_next() returns forced_; we are re-queued
  arrived();
}

detail::wake_reason engine::wait(detail::wait_list& list, const char* op, const weft::platform::source_location& loc,
                                 const instant* deadline) {
  detail::fiber_record* self = running_;
  WEFT_ASSERT(self != nullptr);
  if (deadline != nullptr && *deadline <= now_) {
    yield_point(op, loc, false);
    return detail::wake_reason::timeout;
  }
  list.fibers.push_back(self);
  self->state = detail::fiber_state::blocked;
  self->block_op = op;
  self->block_site = loc;
  self->waiting_on = &list;
  ++self->block_generation;
  self->has_deadline = deadline != nullptr;
  std::int64_t until = -1;
  if (deadline != nullptr) {
    self->deadline = *deadline;
    until = std::chrono::duration_cast<std::chrono::nanoseconds>(*deadline - epoch()).count();
    timers_.push_back(timer_entry{*deadline, timer_sequence_++, self, self->block_generation});
    std::push_heap(timers_.begin(), timers_.end(), &later);
  }
  record_simple(event_kind::block, self->id, 0, until, op, &loc);
  boost::fibers::context::active()->suspend();
  arrived();
  return self->reason;
}

std::size_t engine::notify_one(detail::wait_list& list) noexcept {
  if (list.fibers.empty()) return 0;
  const std::size_t i = list.fibers.size() == 1 ? 0 : static_cast<std::size_t>(schedule_rng_.below(list.fibers.size()));
  detail::fiber_record* f = list.fibers[i];
  list.fibers.erase(list.fibers.begin() + static_cast<std::ptrdiff_t>(i));
  wake(f, detail::wake_reason::notified);
  return 1;
}

std::size_t engine::notify_all(detail::wait_list& list) noexcept {
  std::vector<detail::fiber_record*> woken;
  woken.swap(list.fibers);
  for (auto* f : woken) wake(f, detail::wake_reason::notified);
  return woken.size();
}

void engine::wake(detail::fiber_record* f, detail::wake_reason why) noexcept {
  if (f->state != detail::fiber_state::blocked) return;  // abandoned by an abort
  f->reason = why;
  f->waiting_on = nullptr;
  f->has_deadline = false;
  ++f->block_generation;  // its timer entry, if any, is stale now
  record_simple(event_kind::wake, f->id, current_fiber_id(), 0,
                why == detail::wake_reason::timeout ? "timeout" : nullptr, nullptr);
  f->state = detail::fiber_state::ready;
  boost::fibers::context::active()->schedule(f->ctx);
}

bool engine::fault_point(std::uint8_t kind, const char* name, const weft::platform::source_location& loc) noexcept {
  if (running_ == nullptr || ending_ || kind >= fault_kinds || !faults_open()) return false;
  const std::uint32_t rate = options_.faults.rate_ppm[kind];
  // A fault kind that is off leaves its points out of the schedule entirely: adding a fault point
  // to the runtime then changes no fault-free run (nor its seeds-to-detection figures).
  if (rate == 0) return false;
  yield_point("fault_point", loc, false);
  if (fault_rng_.below(ppm_one) >= rate) return false;
  ++faults_injected_;
  record_simple(event_kind::fault, current_fiber_id(), 0, 0, name, &loc);
  if (kind == static_cast<std::uint8_t>(platform::fault::stop_request) && stop_hook_ && !in_stop_hook_) {
    // The scenario armed a stop (arm_stop_request): deliver it here, on this fiber.
    // A copy: the hook yields inside the runtime, and the scenario may disarm it (destroying
    // the stored one) before this fiber runs again.
    const std::function<void()> hook = stop_hook_;
    in_stop_hook_ = true;
    hook();
    in_stop_hook_ = false;
  }
  return true;
}

bool engine::io_fault(std::uint8_t kind, const char* name) noexcept {
  if (running_ == nullptr || ending_ || kind >= fault_kinds || !faults_open()) return false;
  const std::uint32_t rate = options_.faults.rate_ppm[kind];
  if (rate == 0) return false;  // an unused kind draws nothing, as at fault_point()
  if (fault_rng_.below(ppm_one) >= rate) return false;
  ++faults_injected_;
  record_simple(event_kind::fault, current_fiber_id(), 0, 0, name, nullptr);
  return true;
}

bool engine::buggify(std::string_view name) noexcept {
  constexpr auto kind = static_cast<std::size_t>(platform::fault::buggify);
  if (running_ == nullptr || ending_ || !faults_open()) return false;
  const std::uint32_t rate = options_.faults.rate_ppm[kind];
  if (rate == 0) return false;  // off: no draw, so the run is the one without the site
  auto [site, first] = buggify_sites_.try_emplace(std::string(name), false);
  if (first) {
    // Active or not for the whole run, from the seed and the name alone: the order in which the
    // sites are first met does not matter.
    fnv1a h;
    h.add(name);
    std::uint64_t mix = seed_ ^ h.value();
    site->second = platform::random::splitmix64(mix) % ppm_one < buggify_site_active_ppm;
  }
  if (!site->second || fault_rng_.below(ppm_one) >= rate) return false;
  ++faults_injected_;
  record_simple(event_kind::fault, current_fiber_id(), 0, 0, platform::fault_name(platform::fault::buggify), nullptr,
                std::string(name));
  return true;
}

void engine::probe_hit(const platform::probe_site& site) noexcept {
  if (running_ == nullptr || ending_) return;
  ++probe_hits_[&site];
}

std::uint64_t engine::fault_draw(std::uint64_t bound) noexcept {
  WEFT_ASSERT(bound >= 1);
  return fault_rng_.below(bound);
}

io::world& engine::io_world() {
  if (!io_world_) io_world_ = std::make_unique<io::world>();
  return *io_world_;
}

// ---- the algorithm's side ----------------------------------------------------------------------

bool engine::later(const timer_entry& a, const timer_entry& b) noexcept {
  return a.deadline != b.deadline ? a.deadline > b.deadline : a.sequence > b.sequence;
}

void engine::on_awakened(boost::fibers::context* ctx, detail::fiber_record* f) noexcept {
  if (ctx->is_context(boost::fibers::type::dispatcher_context)) {
    dispatcher_ready_ = ctx;
    return;
  }
  if (f == nullptr) {
    main_ready_ = ctx;
    return;
  }
  if (aborted_) {
    f->state = detail::fiber_state::abandoned;  // a yielder re-queued after the abort
    return;
  }
  f->state = detail::fiber_state::ready;
  ready_.push_back(f);
}

boost::fibers::context* engine::pick_next() noexcept {
  if (!ending_) {
    detail::fiber_record* next = nullptr;
    if (forced_ != nullptr) {
      next = std::exchange(forced_, nullptr);
      ready_.erase(std::find(ready_.begin(), ready_.end(), next));
    } else if (!ready_.empty()) {
      const std::size_t i = strategy_->choose(ready_, nullptr);
      next = ready_[i];
      ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (next != nullptr) {
      switch_to(next);
      return announce_switch(next->ctx, next);
    }
  }
  running_ = nullptr;
  if (main_ready_ != nullptr) return announce_switch(std::exchange(main_ready_, nullptr), nullptr);
  if (dispatcher_ready_ != nullptr) return announce_switch(std::exchange(dispatcher_ready_, nullptr), nullptr);
  return nullptr;
}

boost::fibers::context* engine::announce_switch(boost::fibers::context* to, detail::fiber_record* next) noexcept {
  if (!announce_switches_ || to->is_context(boost::fibers::type::dispatcher_context)) return to;
  boost::fibers::context* from = boost::fibers::context::active();
  void** save = &dispatcher_fake_stack_;
  if (from == main_ctx_) {
    save = &main_fake_stack_;
  } else if (!from->is_context(boost::fibers::type::dispatcher_context)) {
    detail::fiber_record* leaving = static_cast<engine_properties*>(from->get_properties())->fiber;
    WEFT_ASSERT(leaving != nullptr);
    save = leaving->state == detail::fiber_state::finished ? nullptr : &leaving->sanitizer_fake_stack;
  }
  // The target is a fiber, or else the main context, which runs on the OS thread's own stack.
  detail::start_switch(save, next != nullptr ? detail::stack_span{next->stack_bottom, next->stack_size}
                                             : detail::thread_stack());
  return to;
}

void engine::arrived() noexcept {
  if (!announce_switches_) return;
  detail::finish_switch(running_ != nullptr ? running_->sanitizer_fake_stack : main_fake_stack_);
}

void engine::switch_to(detail::fiber_record* f) noexcept {
  f->state = detail::fiber_state::running;
  running_ = f;
  if (f != last_run_) {
    ++switches_;
    last_run_ = f;
    record_simple(event_kind::run, f->id, 0, 0, nullptr, nullptr);
  }
}

bool engine::has_ready() const noexcept {
  return main_ready_ != nullptr || dispatcher_ready_ != nullptr || (!ending_ && !ready_.empty());
}

void engine::on_idle() noexcept {
  if (ending_) return;
  auto stale = [](const timer_entry& e) {
    return e.fiber->state != detail::fiber_state::blocked || e.generation != e.fiber->block_generation;
  };
  while (!timers_.empty() && stale(timers_.front())) {
    std::pop_heap(timers_.begin(), timers_.end(), &later);
    timers_.pop_back();
  }
  if (!timers_.empty()) {
    // Every fiber is blocked: virtual time jumps to the earliest deadline, and every fiber whose
    // deadline that is (or earlier) times out, in (deadline, arming) order.
    const instant next = timers_.front().deadline;
    if (recover_by_ && !recovered_ && next > *recover_by_) {
      // The goal was not reached by its deadline, and nothing before it is left to happen.
      now_ = std::max(now_, *recover_by_);
      record_simple(event_kind::time, 0, 0, now_ns(), nullptr, nullptr);
      fail("did not recover: the goal (context::recovered) was not reached within the recovery bound after the "
           "fault window\n" + describe_fibers());
      abort_run();
      return;
    }
    if (next > now_) {
      now_ = next;
      record_simple(event_kind::time, 0, 0, now_ns(), nullptr, nullptr);
    }
    while (!timers_.empty() && (stale(timers_.front()) || timers_.front().deadline <= now_)) {
      const timer_entry e = timers_.front();
      std::pop_heap(timers_.begin(), timers_.end(), &later);
      timers_.pop_back();
      if (stale(e)) continue;
      auto& waiters = e.fiber->waiting_on->fibers;
      waiters.erase(std::find(waiters.begin(), waiters.end(), e.fiber));
      wake(e.fiber, detail::wake_reason::timeout);
    }
    return;
  }
  if (live_ == 0) return;
  fail("deadlock: every simulated thread is blocked and no virtual deadline is pending\n" + describe_fibers());
  abort_run();
}

}  // namespace weft::sim
