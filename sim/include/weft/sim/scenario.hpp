// weft/sim/scenario.hpp — the scenario registry.
//
// A scenario is a function of a sim::context that drives weft's public API (spawning simulated
// threads with weft::platform::thread or through the runtime) and checks oracles. Register one
// at namespace scope:
//
//   WEFT_SIM_SCENARIO(my_race) (weft::sim::context& sim) {
//     weft::event_loop loop;
//     ...
//   }
//
// and link the translation unit into a binary whose main calls weft::sim::cli_main (the
// `weft_sim_cli_dep` meson dependency does both); then `my-binary fuzz --scenario my_race
// --seeds 10000`. WEFT_SIM_SCENARIO_DOC(name, "one line") adds the line `list` prints.
#pragma once

#include <string>
#include <vector>

namespace weft::sim {

class context;

struct scenario {
  std::string name;
  std::string description;
  void (*body)(context&) = nullptr;
};

class registry {
 public:
  static registry& global();
  void add(scenario s);
  const scenario* find(const std::string& name) const;
  void describe(const std::string& name, std::string description);
  // Sorted by name.
  std::vector<const scenario*> all() const;

 private:
  std::vector<scenario> scenarios_;
};

struct scenario_registrar {
  scenario_registrar(const char* name, void (*body)(context&)) { registry::global().add({name, {}, body}); }
};
struct scenario_doc {
  scenario_doc(const char* name, const char* text) { registry::global().describe(name, text); }
};

// The weft-sim command line (list / run / replay / fuzz) over the registered scenarios.
int cli_main(int argc, char** argv);

}  // namespace weft::sim

#define WEFT_SIM_SCENARIO(name)                                                               \
  static void weft_sim_scenario_##name(::weft::sim::context&);                                \
  [[maybe_unused]] static const ::weft::sim::scenario_registrar weft_sim_registrar_##name{   \
      #name, &weft_sim_scenario_##name};                                                      \
  static void weft_sim_scenario_##name

#define WEFT_SIM_SCENARIO_DOC(name, text) \
  [[maybe_unused]] static const ::weft::sim::scenario_doc weft_sim_doc_##name{#name, text}
