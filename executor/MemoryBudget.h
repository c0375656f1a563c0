//===- MemoryBudget.h - What one host may make its executor reserve -*- C++ -*-===//
//
// A connection process serves one host, which asks it to reserve memory for
// code and for launch slabs. Those reservations are counted here, in bytes
// of address space (pages are committed only as they are used), against the
// cap set by --max-slab-mib, so that one host cannot take the machine.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_MEMORYBUDGET_H
#define CATALYST_REMOTE_EXECUTOR_MEMORYBUDGET_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <mutex>

namespace catalyst::remote::executor {

class MemoryBudget {
public:
  static MemoryBudget &get(); // one per connection process

  void setCap(uint64_t Bytes);
  // Counts Bytes of What ("a launch slab") or fails, naming the cap.
  llvm::Error take(uint64_t Bytes, const char *What);
  void give(uint64_t Bytes);
  uint64_t used() const;

private:
  mutable std::mutex M;
  uint64_t Cap = UINT64_MAX; // guarded by M
  uint64_t Used = 0;         // guarded by M
};

} // namespace catalyst::remote::executor

#endif
