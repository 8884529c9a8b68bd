// trace.cpp — writing traces as text and as Chrome Trace Event JSON.
#include <cstdio>
#include <ostream>
#include <string>

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
    default: return nullptr;
  }
}
}  // namespace

void write_chrome(std::ostream& out, const std::vector<trace_event>& events,
                  const std::vector<std::string>& fiber_names) {
  // Timestamps are scheduling steps shown as microseconds: the only clock that is the same in
  // every replay. Virtual time is in each event's args.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::size_t id = 0; id < fiber_names.size(); ++id) {
    sep();
    out << "{\"ph\":\"M\",\"pid\":1,\"tid\":" << id << ",\"name\":\"thread_name\",\"args\":{\"name\":"
        << json_string(std::to_string(id) + " " + fiber_names[id]) << "}}";
  }
  std::uint64_t running = 0;
  std::uint64_t since = 0;
  auto close_slice = [&](std::uint64_t until) {
    if (running == 0) return;
    sep();
    const std::uint64_t dur = until > since ? until - since : 1;
    out << "{\"ph\":\"X\",\"pid\":1,\"tid\":" << running << ",\"name\":\"run\",\"ts\":" << since
        << ",\"dur\":" << dur << "}";
  };
  for (const auto& e : events) {
    if (e.kind == event_kind::run) {
      close_slice(e.step);
      running = e.fiber;
      since = e.step;
      continue;
    }
    if (e.kind == event_kind::exit && e.fiber == running) {
      close_slice(e.step);
      running = 0;
    }
    const char* name = instant_name(e.kind);
    if (name == nullptr) continue;
    sep();
    std::string label = name;
    if (!e.op.empty()) label += " " + e.op;
    out << "{\"ph\":\"i\",\"pid\":1,\"tid\":" << (e.kind == event_kind::time ? 0 : e.fiber)
        << ",\"s\":\"" << (e.kind == event_kind::time || e.kind == event_kind::fail ? 'g' : 't')
        << "\",\"name\":" << json_string(label) << ",\"ts\":" << e.step
        << ",\"args\":{\"virtual_ns\":" << e.now_ns << ",\"event\":" << json_string(e.line) << "}}";
  }
  if (!events.empty()) close_slice(events.back().step + 1);
  out << "\n]}\n";
}

}  // namespace weft::sim
