//===- Launch.h - A kernel launch on memref arguments -----------*- C++ -*-===//

#ifndef CATALYST_REMOTE_LAUNCH_H
#define CATALYST_REMOTE_LAUNCH_H

#include "catalyst/remote/Resident.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace catalyst::remote {

// A caller-owned memref descriptor and what its elements are; or, as an
// input, a resident (Resident.h) the kernel reads in the executor, whose
// element size and rank must then be Rank's and ElemSize's, what the
// kernel expects. A resident is named by pointer: like a descriptor, it
// must stay valid until the launch returns (or, async, until await).
struct MemrefArg {
  void *Desc = nullptr;
  size_t Rank = 0;
  size_t ElemSize = 0;
  const Resident *Kept = nullptr; // instead of Desc

  // R, as an input of its own rank and element size.
  static MemrefArg of(const Resident &R) { return {nullptr, R.rank(), R.elemSize(), &R}; }
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
  // Empty, or one per output: where not null, that output stays in the
  // executor as a new resident (Resident.h), whose handle is written there
  // once the launch succeeds; none of its values cross, and its descriptor
  // gets its shape with null pointers (dense strides, offset 0). Usable
  // as the next launch's input, and fetched with Session::fetch. The
  // executor keeps the kernel's own buffer where it can (dense, and the
  // kernel's to give), else a dense copy. A failed launch keeps nothing
  // and leaves the handles as they were. Zero-copy sessions only.
  llvm::ArrayRef<Resident *> Keep = {};

  // Whether an input is a resident or an output is to be kept: whether the
  // launch needs its sessions' residents at all.
  bool namesResidents() const {
    for (const MemrefArg &A : Inputs)
      if (A.Kept)
        return true;
    for (const Resident *R : Keep)
      if (R)
        return true;
    return false;
  }
};

} // namespace catalyst::remote

#endif
