//===- MemoryBudget.h - What one host may make its executor reserve -*- C++ -*-===//
//
// A connection process serves one host, which asks it to reserve memory for
// code and for launch slabs. Those reservations are counted here, in bytes
// of address space (pages are committed only as they are used), against the
// cap set by --max-slab-mib, so that one host cannot take the machine.
//
// Threads: setCap() on the connection's main thread before serving;
// take() and give() on the workers that reserve and release memory for
// the host's calls; used() on any thread. All under M.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_MEMORYBUDGET_H
#define CATALYST_REMOTE_EXECUTOR_MEMORYBUDGET_H

#include "sync/Mutex.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace catalyst::remote::executor {

class MemoryBudget {
public:
  MemoryBudget() = default;
  MemoryBudget(const MemoryBudget &) = delete;
  MemoryBudget &operator=(const MemoryBudget &) = delete;

  void setCap(uint64_t Bytes);
  // Counts Bytes of What ("a launch slab") or fails, naming the cap.
  llvm::Error take(uint64_t Bytes, const char *What);
  void give(uint64_t Bytes);
  uint64_t used() const;

private:
  mutable sync::Mutex M;
  uint64_t Cap GUARDED_BY(M) = UINT64_MAX;
  uint64_t Used GUARDED_BY(M) = 0;
};

} // namespace catalyst::remote::executor

#endif
