//===- Launch.h - A kernel launch on memref arguments -----------*- C++ -*-===//

#ifndef CATALYST_REMOTE_LAUNCH_H
#define CATALYST_REMOTE_LAUNCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace catalyst::remote {

// A caller-owned memref descriptor and what its elements are.
struct MemrefArg {
  void *Desc = nullptr;
  size_t Rank = 0;
  size_t ElemSize = 0;
};

// Entry follows Catalyst's pyface ABI, `void entry(void *rv, void *av)`.
// Object names the shipped object whose JITDylib scopes the lookup; empty
// means the main JITDylib. Inputs are read; outputs are overwritten with
// descriptors of fresh host buffers.
struct LaunchCall {
  llvm::StringRef Entry;
  llvm::StringRef Object;
  llvm::ArrayRef<MemrefArg> Inputs;
  llvm::ArrayRef<MemrefArg> Outputs;
};

} // namespace catalyst::remote

#endif
