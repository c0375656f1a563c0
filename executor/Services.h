//===- Services.h - What the executor exports to hosts ----------*- C++ -*-===//
//
// Wrapper functions a host calls through EPC, registered as bootstrap
// symbols: Catalyst's four upstream services, so an upstream host runtime
// can drive this executor, and this project's own (call_wrapper,
// liveness, zero-copy's enable, slabs and shared slabs, the mailbox,
// batched launches, the clock). Zero-copy launches themselves are no
// symbol: they come as payload messages, served by ZeroCopyService.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_SERVICES_H
#define CATALYST_REMOTE_EXECUTOR_SERVICES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"

#include <vector>

namespace catalyst::remote::executor {

struct ServiceOptions {
  // Advertise only the upstream services, as Catalyst's own executor does.
  bool UpstreamOnly = false;
  // The encoded offer of the executor's local socket to hosts on this
  // machine (wire/LocalOffer.h); empty: none.
  std::vector<char> LocalOffer;
};

class ConnectionServices;

// Registers every service, the instances of Connection's included (which
// must outlive the server they are registered with).
void addServices(llvm::StringMap<llvm::orc::ExecutorAddr> &Symbols,
                 llvm::StringMap<std::vector<char>> &BootstrapMap, const ServiceOptions &Options,
                 const ConnectionServices &Connection);

} // namespace catalyst::remote::executor

#endif
