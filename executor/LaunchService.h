//===- LaunchService.h - One launch in one call -----------------*- C++ -*-===//
//
// Decodes a launch request (entry, dense inputs, output ranks), runs the
// entry on descriptors of executor-side copies of the inputs, and answers
// with every output packed densely. What the kernel returned is freed once
// copied, except constant globals, input buffers, and anything twice.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_LAUNCHSERVICE_H
#define CATALYST_REMOTE_EXECUTOR_LAUNCHSERVICE_H

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

namespace catalyst::remote::executor {

llvm::orc::shared::CWrapperFunctionBuffer launchWrapper(const char *Data, size_t Size);

} // namespace catalyst::remote::executor

#endif
