//===- SlabPool.h - Executor memory the host sub-allocates ------*- C++ -*-===//
//
// Per-buffer alloc and free round trips are what make the upstream protocol
// slow. Instead the host reserves one large region on the executor and
// places each launch's buffers in it itself, bump-allocating from the start
// every launch. The region is reused across launches, replaced by a larger
// one when a launch does not fit (up to a cap), and released at close.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_SLABPOOL_H
#define CATALYST_REMOTE_TRANSFER_SLABPOOL_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace catalyst::remote {

class SlabPool {
public:
  // How regions are obtained from and returned to the executor.
  struct Backend {
    llvm::unique_function<llvm::Expected<llvm::orc::ExecutorAddr>(uint64_t Bytes)> Reserve;
    llvm::unique_function<llvm::Error(llvm::orc::ExecutorAddr Base, uint64_t Bytes)> Release;
  };

  static constexpr uint64_t Alignment = 64;

  SlabPool(Backend B, uint64_t InitialBytes, uint64_t CapBytes)
      : B(std::move(B)), Initial(InitialBytes), Cap(CapBytes) {}
  ~SlabPool();

  // Places one launch's buffers, each Alignment-aligned, into Places,
  // replacing the region when they do not fit. Invalidates the previous
  // launch's places.
  llvm::Error place(llvm::ArrayRef<uint64_t> Sizes, std::vector<llvm::orc::ExecutorAddr> &Places);

  uint64_t inUse() const { return InUse; }
  uint64_t highWater() const { return HighWater; }
  llvm::orc::ExecutorAddr base() const { return Base; }
  uint64_t reserved() const { return Size; }
  bool contains(llvm::orc::ExecutorAddr A, uint64_t Bytes) const;

  llvm::Error release();

private:
  llvm::Error grow(uint64_t Needed);

  Backend B;
  uint64_t Initial, Cap;
  llvm::orc::ExecutorAddr Base;
  uint64_t Size = 0;
  uint64_t InUse = 0, HighWater = 0;
};

} // namespace catalyst::remote

#endif
