// registry.cpp — the scenario registry (filled by static registrars before main) and the check of
// a run's knobs against the scenario's declaration.
#include <algorithm>
#include <stdexcept>

#include <weft/sim/options.hpp>
#include <weft/sim/run.hpp>
#include <weft/sim/scenario.hpp>

namespace weft::sim {

const knob* scenario::find_knob(std::string_view knob_name) const {
  for (const auto& k : knobs) {
    if (k.name == knob_name) return &k;
  }
  return nullptr;
}

registry& registry::global() {
  static registry r;
  return r;
}

void registry::add(scenario s) {
  for (auto& existing : scenarios_) {
    if (existing.name == s.name) {
      // Two bodies under one name would leave the link order to pick the one that runs.
      if (existing.body != nullptr) {
        problems_.push_back("scenario '" + s.name + "' is defined twice (two WEFT_SIM_SCENARIO(" + s.name + "))");
        return;
      }
      existing.body = s.body;  // a doc or knobs registered first: fill in the body
      return;
    }
  }
  scenarios_.push_back(std::move(s));
}

void registry::describe(const std::string& name, std::string description) {
  for (auto& existing : scenarios_) {
    if (existing.name == name) {
      if (!existing.description.empty()) {
        problems_.push_back("scenario '" + name + "' is described twice (two WEFT_SIM_SCENARIO_DOC(" + name + "))");
        return;
      }
      existing.description = std::move(description);
      return;
    }
  }
  scenarios_.push_back(scenario{name, std::move(description), nullptr, {}});
}

void registry::declare_knobs(const std::string& name, std::vector<knob> knobs) {
  std::sort(knobs.begin(), knobs.end(), [](const knob& a, const knob& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (knobs[i].min > knobs[i].max) {
      throw std::invalid_argument("scenario " + name + ": knob " + knobs[i].name + " has min > max");
    }
    if (i > 0 && knobs[i].name == knobs[i - 1].name) {
      throw std::invalid_argument("scenario " + name + ": knob " + knobs[i].name + " is declared twice");
    }
  }
  for (auto& existing : scenarios_) {
    if (existing.name == name) {
      if (std::find(knobs_declared_.begin(), knobs_declared_.end(), name) != knobs_declared_.end()) {
        problems_.push_back("scenario '" + name + "' declares its knobs twice (two WEFT_SIM_SCENARIO_KNOBS(" + name +
                            "))");
        return;
      }
      existing.knobs = std::move(knobs);
      knobs_declared_.push_back(name);
      return;
    }
  }
  scenarios_.push_back(scenario{name, {}, nullptr, std::move(knobs)});
  knobs_declared_.push_back(name);
}

std::vector<std::string> registry::problems() const {
  std::vector<std::string> out = problems_;
  for (const auto& s : scenarios_) {
    // A doc or knobs under a name no WEFT_SIM_SCENARIO defines: a typo, or a dropped object file.
    if (s.body == nullptr) out.push_back("'" + s.name + "' has a doc or knobs but no WEFT_SIM_SCENARIO(" + s.name + ")");
  }
  return out;
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

void validate(const scenario& s, const options& o) {
  validate(o);
  for (const auto& [name, value] : o.params) {
    const knob* k = s.find_knob(name);
    if (k == nullptr) {
      std::string known;
      for (const auto& declared : s.knobs) known += (known.empty() ? "" : ", ") + declared.name;
      throw unknown_knob("--param", "scenario " + s.name + " has no knob '" + name +
                                           "'; accepted: " + (known.empty() ? "none" : known));
    }
    if (value < k->min || value > k->max) {
      throw out_of_range("--param", name + "=" + std::to_string(value), k->min, k->max);
    }
  }
}

}  // namespace weft::sim
