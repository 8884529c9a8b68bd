// context.cpp — the scenario's view of its run.
#include <string>

#include <weft/sim/context.hpp>
#include <weft/platform/assert.hpp>
#include <weft/sim/engine.hpp>

#include "host_table.hpp"

namespace weft::sim {

context::context(engine& e, std::uint64_t seed, const options& o, const scenario& s)
    : engine_(e), seed_(seed), options_(o), scenario_(s), random_(e.scenario_random().next()) {}

context::~context() = default;

detail::host_table& context::hosts() {
  if (!hosts_) hosts_ = std::make_unique<detail::host_table>(engine_);
  return *hosts_;
}

const host& context::this_host() const noexcept {
  static const host main_host{0, "main"};
  return main_host;
}

std::optional<host> context::add_host(std::string_view name, platform::source_location loc) {
  return hosts().add(name, loc);
}
void context::boot(const host& h, std::function<void(host_process&)> main, platform::source_location loc) {
  hosts().boot(h, std::move(main), loc);
}
void context::crash(const host& h, platform::source_location loc) { hosts().crash(h, loc); }
void context::shutdown(const host& h, platform::source_location loc) { hosts().shutdown(h, loc); }
bool context::running(const host& h) const { return h.id == 0 || (hosts_ != nullptr && hosts_->running(h)); }
bool context::place_next_spawn(const host& h, const platform::source_location& loc) {
  return hosts().place_next_spawn(h, loc);
}
void context::forget_next_spawn() noexcept { engine_.forget_next_spawn(); }
void context::partition(const host& a, const host& b, platform::source_location loc) {
  hosts().change_link(a, b, detail::host_table::link_change::cut, true, loc);
}
void context::partition_one_way(const host& from, const host& to, platform::source_location loc) {
  hosts().change_link(from, to, detail::host_table::link_change::cut, false, loc);
}
void context::repair(const host& a, const host& b, platform::source_location loc) {
  hosts().change_link(a, b, detail::host_table::link_change::repair, true, loc);
}
void context::repair_one_way(const host& from, const host& to, platform::source_location loc) {
  hosts().change_link(from, to, detail::host_table::link_change::repair, false, loc);
}
void context::hold(const host& a, const host& b, platform::source_location loc) {
  hosts().change_link(a, b, detail::host_table::link_change::hold, true, loc);
}
void context::release(const host& a, const host& b, platform::source_location loc) {
  hosts().change_link(a, b, detail::host_table::link_change::release, true, loc);
}
void context::set_latency(const host& a, const host& b, duration low, duration high, platform::source_location loc) {
  hosts().set_latency(a, b, low, high, loc);
}
std::size_t context::reset_connections(const host& a, const host& b, platform::source_location loc) {
  return hosts().reset_connections(a, b, loc);
}
void context::end_of_scenario() {
  if (hosts_) hosts_->end_of_scenario();
}

std::uint64_t context::pick(std::uint64_t lo, std::uint64_t hi) {
  WEFT_ASSERT(lo <= hi);
  // The whole 64-bit range has no width that fits in 64 bits: a raw draw is uniform over it.
  const std::uint64_t width = hi - lo + 1;
  const std::uint64_t v = width == 0 ? random_.next() : lo + random_.below(width);
  engine_.note("pick " + std::to_string(lo) + ".." + std::to_string(hi) + " -> " + std::to_string(v));
  return v;
}

bool context::chance(std::uint64_t numerator, std::uint64_t denominator) {
  return random_.chance(numerator, denominator);
}

std::int64_t context::param(std::string_view name, std::int64_t fallback) const {
  const auto it = options_.params.find(std::string(name));
  const std::int64_t value = it == options_.params.end() ? fallback : it->second;
  const knob* k = scenario_.find_knob(name);
  if (k == nullptr) {
    engine_.fail("scenario " + scenario_.name + " reads knob '" + std::string(name) +
                 "', which its WEFT_SIM_SCENARIO_KNOBS does not declare");
  } else if (value < k->min || value > k->max) {
    engine_.fail("scenario " + scenario_.name + " chose " + std::string(name) + "=" + std::to_string(value) +
                 ", outside its declared range [" + std::to_string(k->min) + ", " + std::to_string(k->max) + "]");
  }
  engine_.record_param(std::string(name), value);
  return value;
}

void context::note(std::string_view text) { engine_.note(std::string(text)); }
void context::fail(std::string_view message) { engine_.fail(std::string(message)); }
bool context::failed() const noexcept { return engine_.failed(); }
void context::name_thread(std::string_view name) { engine_.name_current(std::string(name)); }
void context::arm_stop_requests(std::function<void()> request_stop) {
  engine_.arm_stop_request(std::move(request_stop));
}
void context::disarm_stop_requests() { engine_.arm_stop_request({}); }
void context::start_liveness(duration fault_window, duration recovery_bound, platform::source_location loc) {
  engine_.start_liveness(fault_window, recovery_bound, loc);
}
void context::recovered(platform::source_location loc) { engine_.recovered(loc); }
void context::crash_disk(platform::source_location loc) { engine_.crash_disk(loc); }

}  // namespace weft::sim
