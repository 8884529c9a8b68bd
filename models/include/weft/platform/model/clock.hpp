// weft/platform/model/clock.hpp — time under the model checker.
//
// Relacy has no notion of time. now() is a constant, so nothing ever observes time passing by
// reading the clock; instead, every deadline wait (sync::condvar::wait_until, hence
// parker::park_until) is a Relacy *timed* wait, which the checker may end with a timeout at any
// point. That explores "the deadline passed" at every interleaving, which is what the concurrent
// primitives must survive; which deadline it was does not matter to them.
#pragma once

namespace weft::platform {

struct clock {
  static instant now() noexcept { return instant{}; }
};

}  // namespace weft::platform
