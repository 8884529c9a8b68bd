// record.cpp — writing and checking replay records (record.hpp).
#include "record.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>
#include <weft/sim/trace.hpp>

#include "option_texts.hpp"

namespace weft::sim {

namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& why) { throw invalid_options("record", one_line(why)); }

bool is_hex16(const std::string& s) {
  if (s.size() != 16) return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The field `key` of `obj`, which must be there and be of the type `is` accepts.
const json& field(const json& obj, const std::string& where, const char* key, bool (json::*is)() const noexcept,
                  const char* type) {
  const auto it = obj.find(key);
  if (it == obj.end()) refuse(cat("missing field \"", where, key, "\""));
  if (!((*it).*is)()) refuse(cat("field \"", where, key, "\" is not ", type));
  return *it;
}

std::string string_field(const json& obj, const std::string& where, const char* key) {
  return field(obj, where, key, &json::is_string, "a string").get<std::string>();
}

void refuse_unknown_fields(const json& obj, const std::string& where, const std::set<std::string>& known) {
  for (const auto& item : obj.items()) {
    if (known.count(item.key()) == 0) refuse(cat("unknown field \"", where, one_line(item.key(), 64), "\""));
  }
}

// A first pass over the text, before a document is built: a field given twice (the document
// would silently keep one of them) and nesting deeper than a record's are refused.
class shape_check final : public nlohmann::json_sax<json> {
 public:
  std::string error;  // why the pass stopped; empty for a syntax error (or none)

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool key(string_t& k) override {
    if (keys_.back().insert(k).second) return true;
    error = cat("field \"", one_line(k, 64), "\" is given twice");
    return false;
  }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool enter() {
    if (keys_.size() == record_depth_max) {
      error = cat("nested deeper than a record's ", std::to_string(record_depth_max), " levels");
      return false;
    }
    keys_.emplace_back();
    return true;
  }
  bool leave() {
    keys_.pop_back();
    return true;
  }
  std::vector<std::set<std::string>> keys_;  // per open object or array: the keys seen so far
};

// The options object: each flag's text under its name without the dashes.
option_texts options_of(const json& obj) {
  const std::string where = "options.";
  refuse_unknown_fields(obj, where,
                        {"strategy", "depth", "pct-steps", "step-budget", "cores", "preemptions", "fault", "param", "swarm"});
  option_texts t;
  t.strategy = string_field(obj, where, "strategy");
  const std::array<std::pair<const char*, std::optional<std::string>*>, 5> numbers = {{
      {"depth", &t.depth},
      {"pct-steps", &t.pct_steps},
      {"step-budget", &t.step_budget},
      {"cores", &t.cores},
      {"preemptions", &t.preemptions},
  }};
  for (const auto& [key, text] : numbers) {
    if (obj.contains(key)) *text = string_field(obj, where, key);
  }
  const auto strings = [&](const char* key, std::size_t count_max, std::vector<std::string>& out) {
    if (!obj.contains(key)) return;
    const json& list = field(obj, where, key, &json::is_array, "an array");
    if (list.size() > count_max) {
      refuse(cat("field \"", where, key, "\" has ", std::to_string(list.size()), " entries; at most ",
                 std::to_string(count_max)));
    }
    for (const json& entry : list) {
      if (!entry.is_string()) refuse(cat("an entry of \"", where, key, "\" is not a string"));
      out.push_back(entry.get<std::string>());
    }
  };
  strings("fault", fault_kinds, t.faults);
  strings("param", record_params_max, t.params);
  if (obj.contains("swarm")) t.swarm = field(obj, where, "swarm", &json::is_boolean, "true or false").get<bool>();
  return t;
}

}  // namespace

std::string refusal_reason(const invalid_options& e) {
  std::string_view why = e.what();
  if (why.rfind("record: ", 0) == 0) why.remove_prefix(std::string_view("record: ").size());
  return std::string(why);
}

std::string one_line(std::string_view text, std::size_t bytes_max) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= bytes_max) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      static constexpr char digits[] = "0123456789abcdef";
      out += "\\x";
      out += digits[byte >> 4];
      out += digits[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

const std::string& build_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) return std::string("unknown");
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
    std::array<char, 1 << 16> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
      const auto n = static_cast<std::size_t>(in.gcount());
      for (std::size_t i = 0; i < n; ++i) {
        h ^= static_cast<unsigned char>(chunk[i]);
        h *= 0x100000001b3ULL;  // FNV-1a 64 prime
      }
    }
    if (in.bad()) return std::string("unknown");
    return hex16(h);
  }();
  return id;
}

std::string render_record(const record& r) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const auto& [flag, value] : replay_flags(r.opts)) {
    const std::string key = flag.substr(2);
    if (key == "fault" || key == "param") {
      o[key].push_back(value);
    } else if (key == "swarm") {
      o[key] = true;
    } else {
      o[key] = value;
    }
  }
  nlohmann::ordered_json j;
  j["format"] = record_format;
  j["version"] = record_version;
  j["build"] = r.build;
  j["command"] = r.command;
  j["scenario"] = r.scenario;
  j["seed"] = std::to_string(r.seed);  // a string: JSON readers that hold numbers as doubles keep it exact
  j["options"] = o;
  j["outcome"] = r.passed ? "pass" : "fail";
  j["failure"] = r.failure;
  j["trace-hash"] = hex16(r.trace_hash);
  // A failure message is the scenario's text: bytes that are not UTF-8 are replaced, not thrown on.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

record parse_record(std::string_view text, const std::string& this_build, bool force) {
  if (text.size() > record_bytes_max) {
    refuse(cat("larger than ", std::to_string(record_bytes_max), " bytes; not a record"));
  }
  // The JSON parser stops at a NUL byte as at the end of its input: whatever follows one would be
  // dropped unread. (A leading UTF-8 byte order mark is skipped, as RFC 8259 lets a parser do.)
  if (text.find('\0') != std::string_view::npos) refuse("contains a NUL byte; not a record");
  // Both parsers refuse invalid UTF-8.
  shape_check shape;
  if (!json::sax_parse(text.begin(), text.end(), &shape)) {
    refuse(shape.error.empty() ? "not valid JSON (malformed or truncated)" : shape.error);
  }
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) refuse("not valid JSON (malformed or truncated)");
  if (!doc.is_object()) refuse("not a JSON object");
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != record_format) {
    refuse(cat("not a weft-sim record (its \"format\" is not \"", std::string(record_format), "\")"));
  }
  const json& version = field(doc, "", "version", &json::is_number, "a number");
  if (!version.is_number_unsigned() || version.get<std::uint64_t>() != record_version) {
    refuse(cat("version ", version.dump(), " is not supported; this weft-sim reads version ",
               std::to_string(record_version)));
  }
  refuse_unknown_fields(doc, "", {"format", "version", "build", "command", "scenario", "seed", "options", "outcome",
                                  "failure", "trace-hash"});
  record r;
  r.build = string_field(doc, "", "build");
  if (r.build != "unknown" && !is_hex16(r.build)) refuse("field \"build\" is not 16 hex digits");
  if (!force && (r.build != this_build || r.build == "unknown")) {
    throw foreign_record("record", cat("written by build ", r.build, ", this is build ", this_build,
                                       "; replay it with the binary that wrote it, or pass --force"));
  }
  r.command = string_field(doc, "", "command");
  if (r.command != "run" && r.command != "fuzz" && r.command != "shrink" && r.command != "check") {
    refuse("field \"command\" is not run, fuzz, shrink or check");
  }
  r.scenario = string_field(doc, "", "scenario");
  if (r.scenario.empty() || r.scenario.size() > record_name_bytes_max) {
    refuse(cat("field \"scenario\" is not a name of 1 to ", std::to_string(record_name_bytes_max), " bytes"));
  }
  try {
    r.seed = parse_integer("seed", string_field(doc, "", "seed"), std::uint64_t{0},
                           std::numeric_limits<std::uint64_t>::max());
    r.opts = parse_options(options_of(field(doc, "", "options", &json::is_object, "an object")), nullptr);
  } catch (const invalid_options& e) {
    if (e.flag() == "record") throw;
    refuse(e.what());
  }
  const std::string outcome = string_field(doc, "", "outcome");
  if (outcome != "pass" && outcome != "fail") refuse("field \"outcome\" is not pass or fail");
  r.passed = outcome == "pass";
  r.failure = string_field(doc, "", "failure");
  const std::string hash = string_field(doc, "", "trace-hash");
  if (!is_hex16(hash)) refuse("field \"trace-hash\" is not 16 hex digits");
  r.trace_hash = std::stoull(hash, nullptr, 16);
  return r;
}

loaded_record load_record(std::string_view text, const std::string& this_build, bool force) {
  loaded_record l{parse_record(text, this_build, force), nullptr};
  l.scn = registry::global().find(l.rec.scenario);
  if (l.scn == nullptr) {
    refuse(cat("no scenario named '", one_line(l.rec.scenario, 64), "' in this binary",
               l.rec.command == "check"
                   ? " (a weft::sim::check record: run the test program that wrote it with WEFT_SIM_RECORD=FILE)"
                   : " (see `list`)"));
  }
  try {
    validate(*l.scn, l.rec.opts);
  } catch (const invalid_options& e) {
    refuse(e.what());
  }
  return l;
}

std::string read_record_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(cat("cannot open it for reading: ", std::strerror(errno)));
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > record_bytes_max) refuse(cat("larger than ", std::to_string(record_bytes_max), " bytes; not a record"));
  }
  if (in.bad()) refuse("reading it failed (a directory?)");
  return text;
}

}  // namespace weft::sim
