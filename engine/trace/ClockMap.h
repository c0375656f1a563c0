//===- ClockMap.h - The executor's clock on the host's ----------*- C++ -*-===//
//
// The executor reports when its phases ran by its own steady clock. A few
// readings of that clock, each taken during a call whose start and end the
// host timed, give the offset between the two clocks: the reading was taken
// somewhere in the call, so the executor's time minus the call's midpoint
// is off by at most half the call's round trip. The sample with the
// shortest round trip wins. Clocks of two machines also drift apart (NTP
// keeps them within tens of parts per million); spans are allowed 100 ppm
// of the time since the estimate on top of the round trip.
//
// The executor's times come from the other process: a time that does not
// fit where the host knows the work happened is dropped, not drawn.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_CLOCKMAP_H
#define CATALYST_REMOTE_TRACE_CLOCKMAP_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace catalyst::remote {

// One reading of the executor's clock, between two of the host's (ns).
struct ClockSample {
  uint64_t HostBeforeNs, ExecutorNs, HostAfterNs;
};

class ClockMap {
public:
  // From the sample with the shortest round trip; none when no sample is
  // usable (an executor reading of 0, an offset beyond 2^62 ns).
  static std::optional<ClockMap> fromSamples(llvm::ArrayRef<ClockSample> Samples);

  // Host time = executor time - offset.
  int64_t offsetNs() const { return Offset; }
  // Half the best sample's round trip.
  uint64_t uncertaintyNs() const { return Uncertainty; }
  // How far a mapped time at host time HostNs may be off: the uncertainty
  // plus the drift allowed since the estimate.
  uint64_t toleranceAt(uint64_t HostNs) const;

  // The host time at which executor phases that began at ExecutorStartNs
  // and lasted DurationsNs (one after another) began, when they fit in the
  // host's window [FirstNs, LastNs] give or take the tolerance; none when
  // they do not (or the start is 0: not reported).
  std::optional<uint64_t> place(uint64_t ExecutorStartNs, llvm::ArrayRef<uint64_t> DurationsNs,
                                uint64_t FirstNs, uint64_t LastNs) const;

private:
  ClockMap(int64_t Offset, uint64_t Uncertainty, uint64_t SyncedNs)
      : Offset(Offset), Uncertainty(Uncertainty), SyncedNs(SyncedNs) {}

  int64_t Offset;
  uint64_t Uncertainty;
  uint64_t SyncedNs; // host time of the estimate
};

} // namespace catalyst::remote

#endif
