// no_scenario.cpp — a simulator binary whose scenarios the linker dropped (or that never had
// any): the CLI must say so and exit with the usage status, never report an empty pass.
int weft_sim_consumer_placeholder = 0;
