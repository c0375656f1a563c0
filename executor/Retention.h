//===- Retention.h - Kernels' freed memory kept faulted in ------*- C++ -*-===//
//
// A kernel that returns a fresh 256 MiB output mallocs it on every launch,
// and the operating system hands it pages that fault in one by one as the
// kernel writes them (a quarter of a second, here). mimalloc maps blocks
// that large straight from the system and unmaps them when freed; from an
// arena reserved up front it reuses them instead, still faulted in, for the
// next launch. The arena's size bounds what is kept; allocations that do
// not fit in it go to the system as before.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_RETENTION_H
#define CATALYST_REMOTE_EXECUTOR_RETENTION_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace catalyst::remote::executor {

// Reserves Bytes of address space for this process's large allocations
// (nothing is resident until touched); zero keeps none.
llvm::Error retainFreedMemory(uint64_t Bytes);

} // namespace catalyst::remote::executor

#endif
