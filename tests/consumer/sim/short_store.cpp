// short_store.cpp — a user's service with a fault site and coverage probes (weft/buggify.hpp),
// for the installed-library check: a writer that trusts a short write is correct in every run
// until the `buggify` fault kind lets its site misbehave; the probes report which paths ran.
#include <cstddef>

#include <weft/buggify.hpp>
#include <weft/sim/context.hpp>
#include <weft/sim/scenario.hpp>

namespace {

std::size_t write_some(std::size_t len) {
  if (weft::sim::buggify("short_store.partial_write") && len > 1) {
    WEFT_SIM_PROBE("short_store.partial_write_taken");
    return len / 2;
  }
  return len;
}

}  // namespace

WEFT_SIM_SCENARIO(short_store)(weft::sim::context& sim) {
  constexpr std::size_t record = 32;
  WEFT_SIM_PROBE("short_store.started");
  // The planted bug: one write, its count never checked against the record's length.
  if (write_some(record) != record) sim.fail("a record was stored short");
}
WEFT_SIM_SCENARIO_DOC(short_store, "stores a record with one write whose short count it ignores (planted bug)");
