//===- TransportHandoff.cpp - Lending a connection's transport ------------===//

#include "TransportHandoff.h"

#include "CrashReporter.h"
#include "Heartbeat.h"
#include "PayloadRouter.h"
#include "SharedSlabs.h"

namespace catalyst::remote::executor {

void TransportHandoff::handOut(wire::SocketTransport &T) {
  Lent = &T;
  armCrashReporter(T);
  Heartbeat::get().attach(T);
  if (Payloads)
    Payloads->attach(T);
  if (Shared)
    Shared->attach(T);
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
  if (Payloads)
    Payloads->detach();
  if (Shared)
    Shared->detach();
  Lent = nullptr;
}

} // namespace catalyst::remote::executor
