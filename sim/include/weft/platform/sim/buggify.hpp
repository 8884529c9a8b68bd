// weft/platform/sim/buggify.hpp — buggify sites and coverage probes report to the run.
//
// buggify(name) asks the run active on this thread (false outside one). A probe site registers
// itself before main (a static member of a template instantiated for the site's own local class),
// so the simulator knows every probe of the program, reached or not; each pass counts a hit in
// the active run.
#pragma once

#include <string_view>

#include <weft/sim/hooks.hpp>

namespace weft::platform {

inline bool buggify(std::string_view name) noexcept { return sim::detail::buggify(name); }

// Instantiated once per probe site (Site is the site's local class); its initialisation, before
// main, puts the site in the program's list.
template <class Site>
struct probe_registration {
  static inline const bool registered = (sim::detail::register_probe(Site::site()), true);
};

}  // namespace weft::platform

#define WEFT_PLATFORM_PROBE(probe_name)                                                          \
  do {                                                                                           \
    struct weft_probe_site_ {                                                                    \
      static const ::weft::platform::probe_site& site() noexcept {                              \
        static constexpr ::weft::platform::probe_site here{probe_name, __FILE__, __LINE__};      \
        return here;                                                                             \
      }                                                                                          \
    };                                                                                           \
    static_cast<void>(::weft::platform::probe_registration<weft_probe_site_>::registered);       \
    ::weft::sim::detail::probe_hit(weft_probe_site_::site());                                    \
  } while (false)
