//===- HangupKind.cpp - What kind of failure a peer's hangup names --------===//

#include "HangupKind.h"

#include "Handshake.h"

using namespace llvm;

namespace catalyst::remote::wire {

FailureKind hangupKind(StringRef Said, FailureKind Otherwise) {
  if (Said.starts_with(AuthRefusal) || Said.starts_with(OtherUserRefusal))
    return FailureKind::Authentication;
  if (Said.starts_with(BusyRefusal) || Said.starts_with(CapacityRefusal))
    return FailureKind::Busy;
  if (Said.starts_with(KernelCrashReport))
    return FailureKind::KernelCrashed;
  if (Said.starts_with(StopNotice))
    return FailureKind::ExecutorLost;
  return Otherwise;
}

} // namespace catalyst::remote::wire
