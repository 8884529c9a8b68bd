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
//
// Every knob a scenario reads with context::param is declared with its accepted range:
//
//   WEFT_SIM_SCENARIO_KNOBS(my_race, {{"workers", 1, 64, "worker threads"},
//                                     {"tasks", 0, 10'000, "tasks submitted"}});
//
// run() rejects a --param the scenario does not declare, or one outside its range, before the
// run starts (invalid_options); a run whose scenario reads an undeclared knob, or whose own
// choice for a knob falls outside the declared range, fails. `list` prints the ranges.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft::sim {

class context;

// A scenario knob (`--param name=value`) and the values it accepts, [min, max] inclusive.
struct knob {
  std::string name;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string help;
};

struct scenario {
  std::string name;
  std::string description;
  std::function<void(context&)> body;  // a registered scenario's is a plain function
  std::vector<knob> knobs{};  // sorted by name

  const knob* find_knob(std::string_view knob_name) const;
};

class registry {
 public:
  static registry& global();
  void add(scenario s);
  const scenario* find(const std::string& name) const;
  void describe(const std::string& name, std::string description);
  // Throws std::invalid_argument for a knob declared twice or with min > max.
  void declare_knobs(const std::string& name, std::vector<knob> knobs);
  // Sorted by name.
  std::vector<const scenario*> all() const;
  // What the registrations got wrong, one line each: a name defined, described or given knobs
  // twice, a doc or knobs for a name no scenario has. Registrars run before main and cannot
  // report, so the command line refuses to run while this is not empty.
  std::vector<std::string> problems() const;

 private:
  std::vector<scenario> scenarios_;
  std::vector<std::string> problems_;
  std::vector<std::string> knobs_declared_;  // the names WEFT_SIM_SCENARIO_KNOBS has named
};

struct scenario_registrar {
  scenario_registrar(const char* name, void (*body)(context&)) { registry::global().add({name, {}, body, {}}); }
};
struct scenario_doc {
  scenario_doc(const char* name, const char* text) { registry::global().describe(name, text); }
};
struct scenario_knobs {
  scenario_knobs(const char* name, std::vector<knob> knobs) { registry::global().declare_knobs(name, std::move(knobs)); }
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

// WEFT_SIM_SCENARIO_KNOBS(name, {{"knob", min, max, "help"}, ...}) or (name, a std::vector<knob>).
#define WEFT_SIM_SCENARIO_KNOBS(name, ...) \
  [[maybe_unused]] static const ::weft::sim::scenario_knobs weft_sim_knobs_##name{#name, __VA_ARGS__}
