// registry.cpp — the scenario registry (filled by static registrars before main).
#include <algorithm>

#include <weft/sim/scenario.hpp>

namespace weft::sim {

registry& registry::global() {
  static registry r;
  return r;
}

void registry::add(scenario s) {
  for (auto& existing : scenarios_) {
    if (existing.name == s.name) {  // a doc registered first: fill in the body
      existing.body = s.body;
      return;
    }
  }
  scenarios_.push_back(std::move(s));
}

void registry::describe(const std::string& name, std::string description) {
  for (auto& existing : scenarios_) {
    if (existing.name == name) {
      existing.description = std::move(description);
      return;
    }
  }
  scenarios_.push_back(scenario{name, std::move(description), nullptr});
}

const scenario* registry::find(const std::string& name) const {
  for (const auto& s : scenarios_) {
    if (s.name == name && s.body != nullptr) return &s;
  }
  return nullptr;
}

std::vector<const scenario*> registry::all() const {
  std::vector<const scenario*> out;
  for (const auto& s : scenarios_) {
    if (s.body != nullptr) out.push_back(&s);
  }
  std::sort(out.begin(), out.end(), [](const scenario* a, const scenario* b) { return a->name < b->name; });
  return out;
}

}  // namespace weft::sim
