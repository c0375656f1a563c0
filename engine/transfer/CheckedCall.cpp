//===- CheckedCall.cpp - Calling the executor, its reply checked ----------===//

#include "CheckedCall.h"

#include "llvm/ExecutionEngine/Orc/Shared/OrcRTBridge.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

Expected<MemoryAccess::ReadBuffersResult> readBuffersChecked(ExecutorProcessControl &EPC,
                                                             ArrayRef<ExecutorAddrRange> Spans) {
  const auto &Symbols = EPC.getBootstrapSymbolsMap();
  auto It = Symbols.find(rt::MemoryReadBuffersWrapperName);
  if (It == Symbols.end())
    return createStringError(inconvertibleErrorCode(), "the executor offers no %s service",
                             rt::MemoryReadBuffersWrapperName);
  using Sig = shared::SPSSequence<shared::SPSSequence<uint8_t>>(
      shared::SPSSequence<shared::SPSExecutorAddrRange>);
  MemoryAccess::ReadBuffersResult Read;
  if (auto Err = callChecked<Sig>(EPC, It->second, "read memory", Read, Spans))
    return Err;
  return Read;
}

} // namespace catalyst::remote
