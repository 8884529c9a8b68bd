// The weft-sim binary: the CLI over the scenarios linked into it.
#include <weft/sim/scenario.hpp>

int main(int argc, char** argv) { return weft::sim::cli_main(argc, argv); }
