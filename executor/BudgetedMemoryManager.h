//===- BudgetedMemoryManager.h - ORC's memory service, within budget -*- C++ -*-===//
//
// ORC's executor memory manager, which hosts use for linked code and for
// batched launch slabs, with every reservation counted against the
// connection's MemoryBudget: its reserve and release entry points are
// replaced by ones that count, and then do what ORC's own do. The budget
// is given at construction and outlives the manager.
//
// Threads: reserve() and release() on the workers that run the host's
// calls, several at once, under M; shutdown() as the connection ends.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_BUDGETEDMEMORYMANAGER_H
#define CATALYST_REMOTE_EXECUTOR_BUDGETEDMEMORYMANAGER_H

#include "Instances.h"
#include "MemoryBudget.h"
#include "sync/Mutex.h"

#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleExecutorMemoryManager.h"

#include <map>

namespace catalyst::remote::executor {

class BudgetedMemoryManager final : public llvm::orc::ExecutorBootstrapService {
public:
  explicit BudgetedMemoryManager(MemoryBudget &Budget);

  llvm::Error shutdown() override;
  void addBootstrapSymbols(llvm::StringMap<llvm::orc::ExecutorAddr> &M) override;

  llvm::Expected<llvm::orc::ExecutorAddr> reserve(uint64_t Size);
  llvm::Error release(const std::vector<llvm::orc::ExecutorAddr> &Bases);
  // What the host knows this manager by: ORC's own instance inside it.
  llvm::orc::ExecutorAddr innerAddress() const { return llvm::orc::ExecutorAddr::fromPtr(&Inner); }

private:
  llvm::orc::rt_bootstrap::SimpleExecutorMemoryManager Inner;
  MemoryBudget &Budget; // set at construction; thread-safe itself
  sync::Mutex M;
  std::map<llvm::orc::ExecutorAddr, uint64_t> Reserved GUARDED_BY(M);
  // Found by the wrappers under innerAddress() from here on; last, so that
  // it goes first.
  Registered<BudgetedMemoryManager> Entry;
};

} // namespace catalyst::remote::executor

#endif
