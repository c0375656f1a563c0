//===- BatchedService.cpp - Running entries on slab-resident inputs -------===//
//
// The host has already written inputs, descriptors and the argument area
// into its slab. The outputs the kernel returns stay here until the host has
// read them, so they are freed at the next invoke or at release.
//
//===----------------------------------------------------------------------===//

#include "BatchedService.h"

#include "CrashReporter.h"
#include "sync/Mutex.h"
#include "wire/MemrefLayout.h"
#include "wire/Protocol.h"
#include "wire/SpsCheck.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <chrono>
#include <cstdlib>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

namespace {

using namespace wire;

sync::Mutex PendingMutex;
SmallPtrSet<void *, 8> Pending GUARDED_BY(PendingMutex); // what the last invoke returned

void freePending() {
  sync::MutexLock Lock(PendingMutex);
  for (void *P : Pending)
    std::free(P);
  Pending.clear();
}

// Keeps what the kernel allocated: not the slab, not constant globals.
void holdReturned(const char *Rv, ArrayRef<uint64_t> Ranks, ExecutorAddrRange Slab) {
  sync::MutexLock Lock(PendingMutex);
  for (uint64_t Rank : Ranks) {
    void *P = MemrefDesc(const_cast<char *>(Rv), Rank).allocated();
    Rv += MemrefDesc::byteSize(Rank);
    if (P && reinterpret_cast<uintptr_t>(P) != ConstantGlobalMarker &&
        !Slab.contains(ExecutorAddr::fromPtr(P)))
      Pending.insert(P);
  }
}

// The returned descriptors, the executor's steady clock (ns) when the entry
// started, and its time.
Expected<std::tuple<std::vector<char>, uint64_t, uint64_t>>
invoke(ExecutorAddr Entry, ExecutorAddr Av, std::vector<uint64_t> Ranks, ExecutorAddr SlabBase,
            uint64_t SlabSize) {
  freePending();
  uint64_t RvBytes = 0;
  for (uint64_t Rank : Ranks) {
    if (Rank > MaxRank)
      return createStringError(inconvertibleErrorCode(), "output rank %llu is above %zu",
                               (unsigned long long)Rank, MaxRank);
    RvBytes += MemrefDesc::byteSize(Rank);
  }
  if (!Entry)
    return createStringError(inconvertibleErrorCode(), "null entry address");
  std::vector<char> Rv(RvBytes, 0);
  using namespace std::chrono;
  quietBeforeKernel();
  auto Start = steady_clock::now();
  Entry.toPtr<void (*)(void *, void *)>()(Rv.data(), Av.toPtr<void *>());
  uint64_t Ns = duration_cast<nanoseconds>(steady_clock::now() - Start).count();
  holdReturned(Rv.data(), Ranks, ExecutorAddrRange(SlabBase, ExecutorAddrDiff(SlabSize)));
  uint64_t StartNs = duration_cast<nanoseconds>(Start.time_since_epoch()).count();
  return std::make_tuple(std::move(Rv), StartNs, Ns);
}

} // namespace

shared::CWrapperFunctionBuffer batchedInvokeWrapper(const char *Data, size_t Size) {
  return handleChecked<SPSBatchedInvokeSig>(Data, Size, invoke).release();
}

shared::CWrapperFunctionBuffer batchedReleaseWrapper(const char *Data, size_t Size) {
  return handleChecked<SPSBatchedReleaseSig>(Data, Size, freePending).release();
}

} // namespace catalyst::remote::executor
