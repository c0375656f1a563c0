//===- OneCallTransfer.h - A launch in one call to the executor -*- C++ -*-===//
//
// Needs this project's executor: one request carries the entry, every input
// (dense) and the output ranks; one reply carries every output (dense). The
// executor frees what the kernel returned once it has copied it out.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_ONECALLTRANSFER_H
#define CATALYST_REMOTE_TRANSFER_ONECALLTRANSFER_H

#include "Transfer.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

namespace catalyst::remote {

class OneCallTransfer final : public Transfer {
public:
  OneCallTransfer(llvm::orc::ExecutorProcessControl &EPC, llvm::orc::ExecutorAddr LaunchFn)
      : EPC(EPC), LaunchFn(LaunchFn) {}

  const char *name() const override { return "one-call"; }
  llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<InputPlan> Inputs,
                     HostOutputs &Outputs) override;

private:
  llvm::orc::ExecutorProcessControl &EPC;
  llvm::orc::ExecutorAddr LaunchFn;
};

} // namespace catalyst::remote

#endif
