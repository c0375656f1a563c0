//===- ClockMap.cpp - The executor's clock on the host's ------------------===//

#include "ClockMap.h"

namespace catalyst::remote {

namespace {

// Far beyond any two steady clocks' distance (146 years), near enough to
// zero that sums of it and 64-bit times stay in 128 bits' easy reach.
constexpr __int128 MaxOffset = __int128(1) << 62;
// 100 ppm of elapsed time.
constexpr uint64_t DriftDivisor = 10000;

} // namespace

std::optional<ClockMap> ClockMap::fromSamples(llvm::ArrayRef<ClockSample> Samples) {
  const ClockSample *Best = nullptr;
  for (const ClockSample &S : Samples) {
    if (S.ExecutorNs == 0 || S.HostAfterNs < S.HostBeforeNs)
      continue;
    if (!Best || S.HostAfterNs - S.HostBeforeNs < Best->HostAfterNs - Best->HostBeforeNs)
      Best = &S;
  }
  if (!Best)
    return std::nullopt;
  uint64_t Trip = Best->HostAfterNs - Best->HostBeforeNs;
  __int128 Mid = __int128(Best->HostBeforeNs) + Trip / 2;
  __int128 Offset = __int128(Best->ExecutorNs) - Mid;
  if (Offset > MaxOffset || Offset < -MaxOffset)
    return std::nullopt;
  return ClockMap(int64_t(Offset), (Trip + 1) / 2, Best->HostAfterNs);
}

uint64_t ClockMap::toleranceAt(uint64_t HostNs) const {
  uint64_t Since = HostNs > SyncedNs ? HostNs - SyncedNs : 0;
  return Uncertainty + Since / DriftDivisor;
}

std::optional<uint64_t> ClockMap::place(uint64_t ExecutorStartNs,
                                        llvm::ArrayRef<uint64_t> DurationsNs, uint64_t FirstNs,
                                        uint64_t LastNs) const {
  if (ExecutorStartNs == 0 || LastNs < FirstNs)
    return std::nullopt;
  __int128 Tolerance = toleranceAt(LastNs);
  __int128 Start = __int128(ExecutorStartNs) - Offset;
  // Each duration is at most 64 bits, so the sum cannot leave 128.
  __int128 End = Start;
  for (uint64_t D : DurationsNs)
    End += D;
  if (Start < __int128(FirstNs) - Tolerance || End > __int128(LastNs) + Tolerance || Start < 0)
    return std::nullopt;
  return uint64_t(Start);
}

} // namespace catalyst::remote
