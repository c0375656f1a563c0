//===- ConnectionServices.cpp - What one connection's services share ------===//

#include "ConnectionServices.h"

#include "wire/Protocol.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

void ConnectionServices::addBootstrapSymbols(StringMap<ExecutorAddr> &Symbols) const {
  Symbols[wire::SlabsInstanceName] = RegionsEntry.address();
  Symbols[wire::SharedSlabsInstanceName] = SharedEntry.address();
  Symbols[wire::ZeroCopyInstanceName] = ZeroCopyEntry.address();
}

} // namespace catalyst::remote::executor
