// weft/platform/model/relacy.hpp — the one place the model flavor includes Relacy.
//
// <relacy/relacy.hpp> (not relacy_std.hpp, which clashes with libstdc++ 12's <atomic>) defines
// keyword-like macros for Relacy's own test style: `memory_order_relaxed` -> `mo_relaxed, $`,
// `new`, `delete`, `malloc`, `free`, `assert`, `errno`. They would rewrite the production code
// included after this header (`std::memory_order_acquire` would stop compiling, `errno` would
// become Relacy's), so each is saved before the include and restored right after it (to the C
// library's meaning, or to undefined). What stays is the `rl::` API and Relacy's `$` / RL_*
// macros, and only in translation units of the model build: nothing outside models/ includes
// this file. Relacy also replaces the global operator new/delete in these programs, so every heap
// allocation made inside a model (a task cell, a waker) is tracked: leaks, double frees and
// accesses to freed memory are reported.
#pragma once

#include <cerrno>  // errno is a macro of the C library: it is saved and restored below
#pragma push_macro("memory_order_relaxed")
#pragma push_macro("memory_order_consume")
#pragma push_macro("memory_order_acquire")
#pragma push_macro("memory_order_release")
#pragma push_macro("memory_order_acq_rel")
#pragma push_macro("memory_order_seq_cst")
#pragma push_macro("new")
#pragma push_macro("delete")
#pragma push_macro("malloc")
#pragma push_macro("calloc")
#pragma push_macro("realloc")
#pragma push_macro("free")
#pragma push_macro("assert")
#pragma push_macro("errno")
#pragma push_macro("VAR_T")
#pragma push_macro("TLS_T")
#pragma push_macro("VAR")
#include <relacy/relacy.hpp>
#pragma pop_macro("memory_order_relaxed")
#pragma pop_macro("memory_order_consume")
#pragma pop_macro("memory_order_acquire")
#pragma pop_macro("memory_order_release")
#pragma pop_macro("memory_order_acq_rel")
#pragma pop_macro("memory_order_seq_cst")
#pragma pop_macro("new")
#pragma pop_macro("delete")
#pragma pop_macro("malloc")
#pragma pop_macro("calloc")
#pragma pop_macro("realloc")
#pragma pop_macro("free")
#pragma pop_macro("assert")
#pragma pop_macro("errno")
#pragma pop_macro("VAR_T")
#pragma pop_macro("TLS_T")
#pragma pop_macro("VAR")

#include <atomic>
#include <weft/platform/source_location.hpp>

namespace weft::platform::model {

// The production call site, as Relacy wants it in its reports.
inline rl::debug_info site(const weft::platform::source_location& loc) noexcept {
  return rl::debug_info(loc.function_name(), loc.file_name(), static_cast<unsigned>(loc.line()));
}

inline rl::memory_order order(std::memory_order mo) noexcept {
  switch (mo) {
    case std::memory_order_relaxed: return rl::mo_relaxed;
    case std::memory_order_consume: return rl::mo_consume;
    case std::memory_order_acquire: return rl::mo_acquire;
    case std::memory_order_release: return rl::mo_release;
    case std::memory_order_acq_rel: return rl::mo_acq_rel;
    case std::memory_order_seq_cst: return rl::mo_seq_cst;
  }
  return rl::mo_seq_cst;
}

}  // namespace weft::platform::model
