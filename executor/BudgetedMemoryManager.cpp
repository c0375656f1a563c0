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

// The one manager of this process; the wrappers serve only its instance.
BudgetedMemoryManager *Instance = nullptr;

Expected<BudgetedMemoryManager &> instanceAt(ExecutorAddr A) {
  if (!Instance || A != Instance->innerAddress())
    return createStringError(inconvertibleErrorCode(),
                             "no memory manager at %#llx in this executor",
                             (unsigned long long)A.getValue());
  return *Instance;
}

CWrapperFunctionBuffer reserveWrapper(const char *Data, size_t Size) {
  return WrapperFunction<rt::SPSSimpleRemoteMemoryMapReserveSignature>::handle(
             Data, Size,
             [](ExecutorAddr At, uint64_t Bytes) -> Expected<ExecutorAddr> {
               auto MM = instanceAt(At);
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
               auto MM = instanceAt(At);
               if (!MM)
                 return MM.takeError();
               return MM->release(Bases);
             })
      .release();
}

} // namespace

BudgetedMemoryManager::BudgetedMemoryManager(MemoryBudget &Budget) : Budget(Budget) {
  assert(!Instance && "one memory manager per connection process");
  Instance = this;
}

BudgetedMemoryManager::~BudgetedMemoryManager() {
  Instance = nullptr;
}

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
