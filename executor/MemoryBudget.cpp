//===- MemoryBudget.cpp - What one host may make its executor reserve -----===//

#include "MemoryBudget.h"

#include <algorithm>

using namespace llvm;

namespace catalyst::remote::executor {

void MemoryBudget::setCap(uint64_t Bytes) {
  sync::MutexLock Lock(M);
  Cap = Bytes;
}

Error MemoryBudget::take(uint64_t Bytes, const char *What) {
  sync::MutexLock Lock(M);
  if (Bytes > Cap || Used > Cap - Bytes)
    return createStringError(std::errc::not_enough_memory,
                             "cannot reserve %s of %llu bytes: the host already holds %llu MiB of "
                             "this executor's per-connection cap of %llu MiB (--max-slab-mib)",
                             What, (unsigned long long)Bytes, (unsigned long long)(Used >> 20),
                             (unsigned long long)(Cap >> 20));
  Used += Bytes;
  return Error::success();
}

void MemoryBudget::give(uint64_t Bytes) {
  sync::MutexLock Lock(M);
  Used -= std::min(Used, Bytes);
}

uint64_t MemoryBudget::used() const {
  sync::MutexLock Lock(M);
  return Used;
}

} // namespace catalyst::remote::executor
