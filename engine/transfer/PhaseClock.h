//===- PhaseClock.h - Timing the phases of a launch -------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TRANSFER_PHASECLOCK_H
#define CATALYST_REMOTE_TRANSFER_PHASECLOCK_H

#include <chrono>
#include <cstdint>

namespace catalyst::remote {

using PhaseClock = std::chrono::steady_clock;

inline uint64_t nsSince(PhaseClock::time_point Start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(PhaseClock::now() - Start).count();
}

} // namespace catalyst::remote

#endif
