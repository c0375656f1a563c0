//===- BudgetedMemoryManager.cpp - ORC's memory service, within budget ----===//

#include "BudgetedMemoryManager.h"

#include "MemoryBudget.h"

#include "llvm/ExecutionEngine/Orc/Shared/OrcRTBridge.h"
#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

using namespace llvm;
using namespace llvm::orc;
using namespace llvm::orc::shared;

namespace catalyst::remote::executor {

namespace {

// The host names a manager by ORC's instance inside it (innerAddress).
Expected<BudgetedMemoryManager &> managerAt(ExecutorAddr A) {
  return instanceAt<BudgetedMemoryManager>(A, "memory manager");
}

CWrapperFunctionBuffer reserveWrapper(const char *Data, size_t Size) {
  return WrapperFunction<rt::SPSSimpleRemoteMemoryMapReserveSignature>::handle(
             Data, Size,
             [](ExecutorAddr At, uint64_t Bytes) -> Expected<ExecutorAddr> {
               auto MM = managerAt(At);
               if (!MM)
                 return MM.takeError();
               return MM->reserve(Bytes);
             })
      .release();
}

CWrapperFunctionBuffer releaseWrapper(const char *Data, size_t Size) {
  return WrapperFunction<rt::SPSSimpleRemoteMemoryMapReleaseSignature>::handle(
             Data, Size,
             [](ExecutorAddr At, std::vector<ExecutorAddr> Bases) -> Error {
               auto MM = managerAt(At);
               if (!MM)
                 return MM.takeError();
               return MM->release(Bases);
             })
      .release();
}

} // namespace

BudgetedMemoryManager::BudgetedMemoryManager(MemoryBudget &Budget)
    : Budget(Budget), Entry(*this, innerAddress()) {}

Error BudgetedMemoryManager::shutdown() {
  Error Err = Inner.shutdown();
  sync::MutexLock Lock(M);
  for (auto &[Base, Bytes] : Reserved)
    Budget.give(Bytes);
  Reserved.clear();
  return Err;
}

void BudgetedMemoryManager::addBootstrapSymbols(StringMap<ExecutorAddr> &Symbols) {
  // The instance the host names stays ORC's own, which initialize and
  // deinitialize, still ORC's, expect.
  Inner.addBootstrapSymbols(Symbols);
  Symbols[rt::SimpleExecutorMemoryManagerReserveWrapperName] =
      ExecutorAddr::fromPtr(&reserveWrapper);
  Symbols[rt::SimpleExecutorMemoryManagerReleaseWrapperName] =
      ExecutorAddr::fromPtr(&releaseWrapper);
}

Expected<ExecutorAddr> BudgetedMemoryManager::reserve(uint64_t Size) {
  if (auto Err = Budget.take(Size, "executor memory"))
    return Err;
  auto Base = Inner.reserve(Size);
  sync::MutexLock Lock(M);
  if (!Base)
    Budget.give(Size);
  else
    Reserved[*Base] = Size;
  return Base;
}

Error BudgetedMemoryManager::release(const std::vector<ExecutorAddr> &Bases) {
  {
    sync::MutexLock Lock(M);
    for (ExecutorAddr B : Bases)
      if (auto It = Reserved.find(B); It != Reserved.end()) {
        Budget.give(It->second);
        Reserved.erase(It);
      }
  }
  return Inner.release(Bases);
}

} // namespace catalyst::remote::executor
