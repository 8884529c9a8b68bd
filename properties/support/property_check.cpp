// properties/support/property_check.cpp — the suite's rapidcheck parameters and main().
#include "property_check.hpp"

#include <cstdlib>
#include <string>

namespace weft::properties {

std::string& current_test_filter() {
  static std::string filter;
  return filter;
}
std::string& test_binary() {
  static std::string path = "./weft-properties";
  return path;
}
std::uint64_t& current_rc_seed() {
  static std::uint64_t seed = default_seed;
  return seed;
}
int& current_max_success() {
  static int n = 0;
  return n;
}
std::size_t& last_failing_case_size() {
  static std::size_t n = 0;
  return n;
}
void note_failing_case_size(std::size_t n) { last_failing_case_size() = n; }

rc::detail::TestParams suite_params(int max_success) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  const std::string given = env != nullptr ? env : "";
  if (given.find("seed=") == std::string::npos) params.seed = default_seed;
  if (given.find("max_success=") == std::string::npos) params.maxSuccess = max_success;
  return params;
}

}  // namespace weft::properties

int main(int argc, char** argv) {
  if (argc > 0) weft::properties::test_binary() = argv[0];
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
