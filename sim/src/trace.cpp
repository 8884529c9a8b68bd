// trace.cpp — writing traces as text and as Chrome Trace Event JSON.
#include <cstdio>
#include <map>
#include <ostream>
#include <string>

#include <weft/platform/trace.hpp>
#include <weft/sim/trace.hpp>

namespace weft::sim {

std::string_view basename_of(const char* path) noexcept {
  std::string_view p(path);
  const auto slash = p.find_last_of('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void write_text(std::ostream& out, const std::vector<trace_event>& events) {
  for (const auto& e : events) out << e.line << '\n';
}

namespace {
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}
const char* instant_name(event_kind k) {
  switch (k) {
    case event_kind::spawn: return "spawn";
    case event_kind::block: return "block";
    case event_kind::wake: return "wake";
    case event_kind::time: return "virtual time";
    case event_kind::fault: return "fault";
    case event_kind::note: return "note";
    case event_kind::exit: return "exit";
    case event_kind::fail: return "FAIL";
    case event_kind::world: return "world:";
    case event_kind::message: return "message";
    default: return nullptr;
  }
}
}  // namespace

void write_chrome(std::ostream& out, const std::vector<trace_event>& events,
                  const std::vector<std::string>& fiber_names, const std::vector<std::uint32_t>& fiber_hosts,
                  const std::vector<std::string>& host_names) {
  // Time is the event's position in the trace (event i at ts = 4*i): the only clock that is the
  // same in every replay and gives every event its own instant. The spacing leaves room to nest
  // slices strictly: a poll slice of events b..e covers [4b, 4e + 2); the run slices inside it
  // start at 4b + 2 or later and end by 4e + 1; the wake flow lands at 4b + 1. Steps and
  // virtual time are in each event's args.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  // A fiber's process: its host's (pid 1 for host 0, and for every fiber of a run without hosts).
  const auto pid = [&fiber_hosts](std::uint64_t fiber) -> std::uint64_t {
    return fiber < fiber_hosts.size() ? fiber_hosts[fiber] + 1 : 1;
  };
  for (std::size_t host = 0; host < host_names.size(); ++host) {
    sep();
    out << "{\"ph\":\"M\",\"pid\":" << host + 1 << ",\"name\":\"process_name\",\"args\":{\"name\":"
        << json_string(host_names[host]) << "}}";
  }
  for (std::size_t id = 0; id < fiber_names.size(); ++id) {
    sep();
    out << "{\"ph\":\"M\",\"pid\":" << pid(id) << ",\"tid\":" << id << ",\"name\":\"thread_name\",\"args\":{\"name\":"
        << json_string(std::to_string(id) + " " + fiber_names[id]) << "}}";
  }
  std::uint64_t running = 0;  // the fiber whose run slice is open (0: none)
  std::uint64_t since = 0;    // where that run slice began
  auto close_run = [&](std::uint64_t until) {
    if (running == 0 || until <= since) return;
    sep();
    out << "{\"ph\":\"X\",\"pid\":" << pid(running) << ",\"tid\":" << running << ",\"name\":\"run\",\"ts\":" << since
        << ",\"dur\":" << until - since << "}";
  };
  struct open_poll {
    std::uint64_t ts;
    const trace_event* begin;
  };
  std::map<std::uint64_t, std::vector<open_poll>> polls;  // fiber -> open polls, innermost last
  auto emit_poll = [&](std::uint64_t fiber, const open_poll& p, std::uint64_t end, std::string_view result) {
    sep();
    out << "{\"ph\":\"X\",\"cat\":\"task\",\"pid\":" << pid(fiber) << ",\"tid\":" << fiber
        << ",\"name\":" << json_string("poll task " + std::to_string(p.begin->task)) << ",\"ts\":" << p.ts
        << ",\"dur\":" << end - p.ts << ",\"args\":{\"task\":" << p.begin->task << ",\"id\":" << p.begin->task_id
        << ",\"result\":" << json_string(result) << ",\"step\":" << p.begin->step
        << ",\"virtual_ns\":" << p.begin->now_ns << "}}";
  };
  struct pending_wake {
    std::uint64_t ts;
    std::uint64_t fiber;
  };
  std::map<std::uint64_t, pending_wake> wakes;  // task -> its latest wake that queued a poll
  std::uint64_t flow_id = 0;
  using platform::task_event;
  std::uint64_t ts = 0;
  for (std::size_t i = 0; i < events.size(); ++i, ts += 4) {
    const trace_event& e = events[i];
    if (e.kind == event_kind::run) {
      close_run(ts);
      running = e.fiber;
      since = ts;
      continue;
    }
    if (e.kind == event_kind::exit && e.fiber == running) {
      close_run(ts);
      running = 0;
    }
    if (e.kind == event_kind::task) {
      const auto what = static_cast<task_event>(e.value);
      if (what == task_event::poll_begin) {
        if (e.fiber == running) {
          close_run(ts);
          since = ts + 2;
        }
        polls[e.fiber].push_back(open_poll{ts, &e});
        if (auto w = wakes.find(e.task); w != wakes.end()) {
          ++flow_id;
          sep();
          out << "{\"ph\":\"s\",\"cat\":\"wake\",\"name\":\"wake\",\"id\":" << flow_id
              << ",\"pid\":" << pid(w->second.fiber) << ",\"tid\":" << w->second.fiber << ",\"ts\":" << w->second.ts << "}";
          sep();
          out << "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wake\",\"name\":\"wake\",\"id\":" << flow_id
              << ",\"pid\":" << pid(e.fiber) << ",\"tid\":" << e.fiber << ",\"ts\":" << ts + 1 << "}";
          wakes.erase(w);
        }
        continue;
      }
      if (what == task_event::poll_end) {
        auto& open = polls[e.fiber];
        if (open.empty()) continue;  // its begin was not traced
        if (e.fiber == running) {
          close_run(ts + 1);
          since = ts + 2;
        }
        emit_poll(e.fiber, open.back(), ts + 2, e.detail);
        open.pop_back();
        continue;
      }
      if (what == task_event::woken) wakes[e.task] = pending_wake{ts, e.fiber};
      std::string label;
      if (what == task_event::woken) {
        label = "wake task " + std::to_string(e.task);
      } else if (what == task_event::wake_coalesced) {
        label = "wake task " + std::to_string(e.task) + " (coalesced)";
      } else {
        label = "task " + std::to_string(e.task) + " " + e.op;
        if (!e.detail.empty()) label += ": " + e.detail;
      }
      sep();
      out << "{\"ph\":\"i\",\"cat\":\"task\",\"pid\":" << pid(e.fiber) << ",\"tid\":" << e.fiber << ",\"s\":\"t\",\"name\":"
          << json_string(label) << ",\"ts\":" << ts << ",\"args\":{\"task\":" << e.task << ",\"id\":" << e.task_id
          << ",\"state\":" << json_string(e.op);
      if (!e.detail.empty()) out << ",\"outcome\":" << json_string(e.detail);
      out << ",\"step\":" << e.step << ",\"virtual_ns\":" << e.now_ns << ",\"event\":" << json_string(e.line)
          << "}}";
      continue;
    }
    const char* name = instant_name(e.kind);
    if (name == nullptr) continue;
    if (e.kind == event_kind::message) {
      // The arrow of message `value`: its send starts it, its delivery ends it.
      const bool arrival = e.op == "arrive";
      sep();
      out << "{\"ph\":\"" << (arrival ? "f\",\"bp\":\"e" : "s") << "\",\"cat\":\"message\",\"name\":\"message\",\"id\":"
          << e.value << ",\"pid\":" << e.other + 1 << ",\"tid\":" << e.fiber << ",\"ts\":" << ts << "}";
    }
    sep();
    std::string label = name;
    if (!e.op.empty()) label += " " + e.op;
    if (e.kind == event_kind::world || e.kind == event_kind::message) label += " " + e.detail;
    const bool global = e.kind == event_kind::time || e.kind == event_kind::fail || e.kind == event_kind::world;
    const std::uint64_t lane = e.kind == event_kind::time ? 0 : e.fiber;
    const std::uint64_t process = e.kind == event_kind::message ? e.other + 1 : pid(lane);
    out << "{\"ph\":\"i\",\"pid\":" << process << ",\"tid\":" << lane
        << ",\"s\":\"" << (global ? 'g' : 't')
        << "\",\"name\":" << json_string(label) << ",\"ts\":" << ts << ",\"args\":{\"step\":" << e.step
        << ",\"virtual_ns\":" << e.now_ns << ",\"event\":" << json_string(e.line) << "}}";
  }
  // The run ended (or was abandoned) with these still open.
  close_run(ts + 1);
  for (auto& [fiber, open] : polls) {
    while (!open.empty()) {
      emit_poll(fiber, open.back(), ts + 2, "unfinished");
      open.pop_back();
    }
  }
  out << "\n]}\n";
}

}  // namespace weft::sim
