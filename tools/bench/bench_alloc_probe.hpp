// tools/bench/bench_alloc_probe.hpp — replaces the global operator new/delete of a scenario
// program so bench::last_allocation_bytes tells the size of the last request (for task_memory's
// frame size). Include from exactly one translation unit. Costs a thread-local store per
// allocation, in every C++ program of the comparison alike.
#pragma once

#include <cstdlib>
#include <new>

#include "bench_common.hpp"

// noinline: inlined into callers, g++ 12 pairs the malloc/free inside with new/delete expressions
// and reports a (false) -Wmismatched-new-delete.
[[gnu::noinline]] void* operator new(std::size_t n) {
  bench::last_allocation_bytes = n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) { return ::operator new(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
