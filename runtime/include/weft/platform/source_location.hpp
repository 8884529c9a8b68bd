// weft/platform/source_location.hpp — the call site a seam operation reports (file, line, function).
//
// std::source_location where the standard library provides it; otherwise the same interface
// built on the compiler builtins it is specified with. clang 14 with libstdc++ 12 is such a case:
// the header exists but needs a builtin that clang added later.
#pragma once

#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace weft::platform {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
class source_location {
 public:
  // Default arguments are evaluated at the caller, which is what makes the builtins name it.
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           std::uint_least32_t line = __builtin_LINE(),
                                           std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location loc;
    loc.file_ = file;
    loc.function_ = function;
    loc.line_ = line;
    loc.column_ = column;
    return loc;
  }

  constexpr source_location() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};
#endif

}  // namespace weft::platform
