//===- TransportHandoff.cpp - Lending a connection's transport ------------===//

#include "TransportHandoff.h"

#include "CrashReporter.h"
#include "Heartbeat.h"
#include "SharedSlabs.h"
#include "ZeroCopyService.h"

namespace catalyst::remote::executor {

void TransportHandoff::handOut(wire::SocketTransport &T) {
  Lent = &T;
  armCrashReporter(T);
  Heartbeat::get().attach(T);
  if (Extensions)
    ZeroCopyService::get().attach(T);
  if (Extensions && Shared)
    SharedSlabs::get().attach(T);
}

// Never touches the transport itself: when creating the server failed, it
// may be gone already.
void TransportHandoff::takeBack() {
  if (!Lent)
    return;
  // The heartbeat first: its thread is the only one that may still be
  // using the transport.
  Heartbeat::get().stop();
  disarmCrashReporter();
  if (Extensions)
    ZeroCopyService::get().detach();
  if (Extensions && Shared)
    SharedSlabs::get().detach();
  Lent = nullptr;
}

} // namespace catalyst::remote::executor
