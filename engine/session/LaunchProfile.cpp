//===- LaunchProfile.cpp - One line per launch on stderr ------------------===//

#include "LaunchProfile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace llvm;

namespace catalyst::remote {

void printProfile(StringRef Entry, const char *Strategy, TransportKind Over, const LaunchStats &S) {
  auto Us = [](uint64_t Ns) { return format("%.1f", Ns / 1000.0); };
  const PhaseTimes &P = S.Phases;
  // Built whole, then written at once (stderr is unbuffered): lines of
  // launches on two sessions do not interleave.
  std::string Line;
  raw_string_ostream Out(Line);
  Out << "catalyst-remote: launch " << Entry << " [" << Strategy << " over " << transportName(Over)
      << "] " << S.RoundTrips << " round trips, " << S.Messages << " messages, " << S.BytesSent
      << " B sent, " << S.BytesReceived << " B received, copies host " << S.HostCopyBytes
      << " B executor " << S.ExecutorCopyBytes << " B, slab " << S.SlabInUse << " B (high "
      << S.SlabHighWater << " B), outputs ready " << S.OutputsReady << "; us: plan " << Us(P.PlanNs)
      << " send " << Us(P.SendNs) << " copy-in " << Us(P.CopyInNs) << " kernel " << Us(P.KernelNs)
      << " copy-out " << Us(P.CopyOutNs) << " receive " << Us(P.ReceiveNs) << " rewrite "
      << Us(P.RewriteNs) << "\n";
  errs() << Line;
}

} // namespace catalyst::remote
