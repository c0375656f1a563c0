//===- BatchedTransfer.h - Three round trips, standard services -*- C++ -*-===//
//
// Inputs, their descriptors and the argument area are placed in a slab the
// host reserved through ORC's executor memory service, and go over in one
// MemoryAccess::writeBuffers. One call runs the entry and returns the output
// descriptors (freeing what the previous launch returned), and one
// readBuffers brings every output back.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_BATCHEDTRANSFER_H
#define CATALYST_REMOTE_TRANSFER_BATCHEDTRANSFER_H

#include "SlabPool.h"
#include "Transfer.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

namespace catalyst::remote {

class BatchedTransfer final : public Transfer {
public:
  struct Services {
    llvm::orc::ExecutorAddr Invoke, Release;
  };

  BatchedTransfer(llvm::orc::ExecutorProcessControl &EPC, Services S, SlabPool::Backend Slabs,
                  uint64_t SlabInitial, uint64_t SlabCap)
      : EPC(EPC), S(S), Pool(std::move(Slabs), SlabInitial, SlabCap) {}

  const char *name() const override { return "batched"; }
  llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                     HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) override;
  llvm::Error close() override;

private:
  llvm::Error writeInputs(llvm::ArrayRef<CheckedInput> Inputs, llvm::orc::ExecutorAddr &Av,
                          LaunchStats &Stats);
  llvm::Expected<std::vector<char>> invoke(llvm::orc::ExecutorAddr Entry,
                                           llvm::orc::ExecutorAddr Av, const HostOutputs &Outputs,
                                           LaunchStats &Stats, LaunchTimeline &When);
  llvm::Error readOutputs(std::vector<char> &Rv, HostOutputs &Outputs, LaunchStats &Stats);

  llvm::orc::ExecutorProcessControl &EPC;
  Services S;
  SlabPool Pool;
};

// Reserves and releases slabs through ORC's SimpleExecutorMemoryManager.
llvm::Expected<SlabPool::Backend> executorMemoryBackend(llvm::orc::ExecutorProcessControl &EPC);

} // namespace catalyst::remote

#endif
