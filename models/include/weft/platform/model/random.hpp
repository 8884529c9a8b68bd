// weft/platform/model/random.hpp — seeds under the model checker.
//
// A Relacy run must be a pure function of the schedule (Relacy re-runs a failing iteration to
// print its history and verifies it fails the same way), so the seed is a constant.
#pragma once

#include <cstdint>

namespace weft::platform {

inline std::uint64_t entropy_seed() noexcept { return 0x5eed'0f'3e1a'c7ULL; }

}  // namespace weft::platform
