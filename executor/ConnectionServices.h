//===- ConnectionServices.h - What one connection's services share -*- C++ -*-===//
//
// The executor serves one host per process, and this is that host's state:
// the memory budget its reservations count against, the slabs its launches
// land in, the shared slabs of the local socket, the tensors it keeps
// (residents), and the services of its payload messages: zero-copy
// launches and residents, behind one router. serveConnection() builds it on its stack, before the
// EPC server and outliving it, so that nothing else owns it and a kernel's exit(), which runs
// static destructors under other threads, cannot destroy it.
//
// The services a host calls are published as instance bootstrap symbols
// (addBootstrapSymbols), ORC's way: the host passes the instance back with
// each call, and the wrapper finds the object through it (Instances.h).
//
// Thread-safety: built and destroyed on the connection's main thread; each
// member says which threads use it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_CONNECTIONSERVICES_H
#define CATALYST_REMOTE_EXECUTOR_CONNECTIONSERVICES_H

#include "Instances.h"
#include "MemoryBudget.h"
#include "PayloadRouter.h"
#include "ResidentService.h"
#include "ResidentStore.h"
#include "SharedSlabs.h"
#include "Slabs.h"
#include "ZeroCopyService.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"

#include <cstdint>

namespace catalyst::remote::executor {

class ConnectionServices {
public:
  // MaxReservedBytes: what the host may make this executor reserve, code,
  // slabs and residents together (--max-slab-mib); MaxResidentBytes: what
  // it may keep as residents (--max-resident-mib).
  ConnectionServices(uint64_t MaxReservedBytes, uint64_t MaxResidentBytes)
      : Residents(Budget, MaxResidentBytes) {
    Budget.setCap(MaxReservedBytes);
  }
  ConnectionServices(const ConnectionServices &) = delete;
  ConnectionServices &operator=(const ConnectionServices &) = delete;

  MemoryBudget &budget() { return Budget; }
  Slabs &slabs() { return Regions; }
  SharedSlabs &sharedSlabs() { return Shared; }
  ZeroCopyService &zeroCopy() { return ZeroCopy; }
  ResidentStore &residents() { return Residents; }
  // The transport's payload handler: launches and resident requests.
  PayloadRouter &payloads() { return Payloads; }

  // Publishes the instances of the services hosts call by name
  // (wire::SlabsInstanceName and the others).
  void addBootstrapSymbols(llvm::StringMap<llvm::orc::ExecutorAddr> &Symbols) const;

private:
  MemoryBudget Budget;
  Slabs Regions{Budget};
  SharedSlabs Shared{Regions, Budget};
  ResidentStore Residents;
  ZeroCopyService ZeroCopy{Regions, Shared, Residents};
  ResidentService ResidentRequests{Residents};
  PayloadRouter Payloads{ZeroCopy, ResidentRequests};
  Registered<Slabs> RegionsEntry{Regions};
  Registered<SharedSlabs> SharedEntry{Shared};
  Registered<ZeroCopyService> ZeroCopyEntry{ZeroCopy};
};

} // namespace catalyst::remote::executor

#endif
