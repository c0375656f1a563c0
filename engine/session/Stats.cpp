//===- Stats.cpp - What a session's launches cost -------------------------===//

#include "catalyst/remote/Stats.h"

namespace catalyst::remote {

PhaseTimes &PhaseTimes::operator+=(const PhaseTimes &O) {
  PlanNs += O.PlanNs;
  SendNs += O.SendNs;
  CopyInNs += O.CopyInNs;
  KernelNs += O.KernelNs;
  CopyOutNs += O.CopyOutNs;
  ReceiveNs += O.ReceiveNs;
  RewriteNs += O.RewriteNs;
  return *this;
}

LaunchStats &LaunchStats::operator+=(const LaunchStats &O) {
  RoundTrips += O.RoundTrips;
  Messages += O.Messages;
  BytesSent += O.BytesSent;
  BytesReceived += O.BytesReceived;
  HostCopyBytes += O.HostCopyBytes;
  ExecutorCopyBytes += O.ExecutorCopyBytes;
  OutputsReady += O.OutputsReady;
  ResidentBytes += O.ResidentBytes;
  SlabInUse = O.SlabInUse;
  SlabHighWater = O.SlabHighWater > SlabHighWater ? O.SlabHighWater : SlabHighWater;
  Phases += O.Phases;
  return *this;
}

} // namespace catalyst::remote
