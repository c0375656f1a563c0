//===- NaiveTransfer.h - Catalyst's upstream launch protocol ----*- C++ -*-===//
//
// Works against any executor that exports the four upstream services, one
// round trip per step: per input an alloc and a write for its values and for
// its descriptor; the argument and result areas; the invoke; a read of the
// result descriptors and one per output; a free per buffer. Unlike upstream
// it frees the kernel's output buffers (never constant globals, never twice)
// and transfers strided inputs as the values they describe.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_NAIVETRANSFER_H
#define CATALYST_REMOTE_TRANSFER_NAIVETRANSFER_H

#include "Transfer.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

namespace catalyst::remote {

struct UpstreamServices {
  llvm::orc::ExecutorAddr Alloc, Free, Invoke, StoreAsset;
};

class NaiveTransfer final : public Transfer {
public:
  NaiveTransfer(llvm::orc::ExecutorProcessControl &EPC, UpstreamServices S) : EPC(EPC), S(S) {}

  const char *name() const override { return "naive"; }
  uint64_t largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const override;
  llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                     HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) override;

private:
  llvm::orc::ExecutorProcessControl &EPC;
  UpstreamServices S;
};

} // namespace catalyst::remote

#endif
