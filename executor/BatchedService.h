//===- BatchedService.h - Running entries on slab-resident inputs -*- C++ -*-===//

#ifndef CATALYST_REMOTE_EXECUTOR_BATCHEDSERVICE_H
#define CATALYST_REMOTE_EXECUTOR_BATCHEDSERVICE_H

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

namespace catalyst::remote::executor {

llvm::orc::shared::CWrapperFunctionBuffer batchedInvokeWrapper(const char *Data, size_t Size);
llvm::orc::shared::CWrapperFunctionBuffer batchedReleaseWrapper(const char *Data, size_t Size);

} // namespace catalyst::remote::executor

#endif
