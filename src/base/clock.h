// The one clock every deadline and time-out in hoop is measured on: monotonic, so a wall-clock
// step (NTP, a suspended VM) can neither fire nor postpone a time-out.
#pragma once

#include <chrono>

namespace hoop {

using Clock = std::chrono::steady_clock;

}  // namespace hoop
