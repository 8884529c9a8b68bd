// weft/compiler_support.hpp — the language level and compilers weft's headers accept.
//
// Every public header includes this first, so a consumer on an unsupported setup gets one error
// that says what to change. An #error alone lets the compiler go on into a cascade of errors from
// the headers that follow; the include of a header that does not exist after it stops there.
#pragma once

#if __cplusplus < 202002L
#error "weft needs C++20 or later: compile with -std=c++20 (pkg-config --cflags weft carries it)"
#include <weft_compilation_stops_at_the_error_above>
#endif

// g++ before 13 destroys each aggregate temporary of a co_await full-expression twice (on resume,
// unwinding and frame destruction alike), which corrupts the memory of ordinary task code such as
// `co_await leaf{ptr}`. No runtime design can repair it, so weft refuses the compiler; clang 14 or
// later is supported (docs/decisions.md, "Compilers"; meson.build probes the build's compiler).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#error "weft refuses g++ < 13: it destroys co_await temporaries twice; build with clang++ (CXX=clang++)"
#include <weft_compilation_stops_at_the_error_above>
#endif
