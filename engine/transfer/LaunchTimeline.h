//===- LaunchTimeline.h - When a launch's phases ran ------------*- C++ -*-===//
//
// What a trace draws of one launch besides its phase times (Stats.h): when
// each phase began. Filled on every launch, traced or not: it costs a few
// stores of clock readings the phase times take anyway.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_LAUNCHTIMELINE_H
#define CATALYST_REMOTE_TRANSFER_LAUNCHTIMELINE_H

#include "PhaseClock.h"

#include <cstdint>

namespace catalyst::remote {

struct LaunchTimeline {
  // On the host's clock; a phase left at the epoch did not begin.
  PhaseClock::time_point Plan, Send, Invoke, Receive, Rewrite, End;
  // The host's call that ran the entry (naive, batched), which PhaseTimes
  // has no field for.
  uint64_t InvokeNs = 0;
  // The executor's steady clock (ns) when its first phase it reports began:
  // copy-in (zerocopy) or the kernel (batched). 0: not reported.
  uint64_t ExecutorStartNs = 0;
};

inline bool began(PhaseClock::time_point T) {
  return T != PhaseClock::time_point();
}

} // namespace catalyst::remote

#endif
