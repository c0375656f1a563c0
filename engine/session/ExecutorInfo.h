//===- ExecutorInfo.h - Reading what an executor announced ------*- C++ -*-===//

#ifndef CATALYST_REMOTE_SESSION_EXECUTORINFO_H
#define CATALYST_REMOTE_SESSION_EXECUTORINFO_H

#include "catalyst/remote/ExecutorInfo.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

namespace catalyst::remote {

// What EPC's executor announced in its bootstrap symbols and map. A value
// that does not decode counts as not announced.
ExecutorInfo describeExecutor(const llvm::orc::ExecutorProcessControl &EPC, bool Authenticated);

// Whether the executor announced every one of these service symbols.
bool hasSymbols(const llvm::orc::ExecutorProcessControl &EPC, llvm::ArrayRef<const char *> Names);

} // namespace catalyst::remote

#endif
