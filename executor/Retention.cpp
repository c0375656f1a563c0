//===- Retention.cpp - Kernels' freed memory kept faulted in --------------===//

#include "Retention.h"

#include <cerrno>
#include <cstring>
#include <mimalloc.h>

using namespace llvm;

namespace catalyst::remote::executor {

Error retainFreedMemory(uint64_t Bytes) {
  if (Bytes == 0)
    return Error::success();
  // Committed: mimalloc resets (MADV_DONTNEED) a freed huge block whose
  // memory it may decommit, and every block of a kernel's thread is freed
  // as if from another thread. On Linux, committing maps the range
  // read-write and no more: pages still fault in on first touch only.
  if (int Err = mi_reserve_os_memory(Bytes, /*commit=*/true, /*allow_large=*/false))
    return createStringError(std::error_code(Err, std::generic_category()),
                             "cannot reserve %llu MiB to keep kernels' freed memory in: %s",
                             (unsigned long long)(Bytes >> 20), std::strerror(Err));
  return Error::success();
}

} // namespace catalyst::remote::executor
