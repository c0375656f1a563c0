//===- Llvm22Compat.h - Catalyst's executor.cpp on LLVM 22 ------*- C++ -*-===//
//
// Force-included (-include) into Catalyst's executor.cpp, which is compiled
// unmodified from the extract. LLVM 22 renamed ORC's C wrapper-function
// result, llvm::orc::shared::CWrapperFunctionResult, to CWrapperFunctionBuffer
// (same layout); the old name, which that file still uses, is an alias here.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_UPSTREAM_LLVM22COMPAT_H
#define CATALYST_REMOTE_TESTS_UPSTREAM_LLVM22COMPAT_H

#ifdef __cplusplus
#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

namespace llvm::orc::shared {
using CWrapperFunctionResult = CWrapperFunctionBuffer;
} // namespace llvm::orc::shared
#endif

#endif
