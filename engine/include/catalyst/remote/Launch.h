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
// descriptors of fresh host buffers, or of the caller's own (Into).
struct LaunchCall {
  llvm::StringRef Entry;
  llvm::StringRef Object;
  llvm::ArrayRef<MemrefArg> Inputs;
  llvm::ArrayRef<MemrefArg> Outputs;
  // Empty, or one per output: a buffer of the caller's to receive that
  // output into, for a caller that launches the same shapes again and
  // again. A fresh buffer's pages are zeroed by the OS on first touch, a
  // cost of the order of the transfer itself; a buffer used before is not.
  // An output whose dense values do not fit its buffer (or whose buffer is
  // empty) gets a fresh one as usual: the descriptor's allocated pointer
  // says which, and a given buffer stays the caller's either way. Buffers
  // must not overlap one another. After a failed launch, a lent buffer may
  // hold part of an output.
  llvm::ArrayRef<llvm::MutableArrayRef<char>> Into = {};
};

} // namespace catalyst::remote

#endif
