//===- SlabPool.cpp - Executor memory the host sub-allocates --------------===//

#include "SlabPool.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

SlabPool::~SlabPool() {
  // close() released the slab of a live connection. One left here fails to
  // go only with its connection lost, and the executor's connection process
  // frees it then, as it ends.
  consumeError(release());
}

static uint64_t alignUp(uint64_t V) {
  return (V + SlabPool::Alignment - 1) / SlabPool::Alignment * SlabPool::Alignment;
}

Error SlabPool::place(ArrayRef<uint64_t> Sizes, std::vector<ExecutorAddr> &Places) {
  uint64_t Total = 0;
  for (uint64_t S : Sizes)
    if (__builtin_add_overflow(Total, alignUp(std::max<uint64_t>(S, 1)), &Total))
      return createStringError(inconvertibleErrorCode(),
                               "launch buffers overflow the address range");
  if (Total > Size)
    if (auto Err = grow(Total))
      return Err;
  Places.clear();
  uint64_t Offset = 0;
  for (uint64_t S : Sizes) {
    Places.push_back(Base + Offset);
    Offset += alignUp(std::max<uint64_t>(S, 1));
  }
  InUse = Total;
  HighWater = std::max(HighWater, Total);
  return Error::success();
}

Error SlabPool::grow(uint64_t Needed) {
  if (Needed > Cap)
    return createStringError(std::errc::not_enough_memory,
                             "a launch needs %llu bytes of executor memory; the slab cap is %llu "
                             "(SessionOptions::SlabCap)",
                             (unsigned long long)Needed, (unsigned long long)Cap);
  // Doubling keeps the number of replacements logarithmic in the peak.
  uint64_t NewSize = std::min(Cap, std::max({Needed, Initial, Size * 2}));
  if (auto Err = release())
    return Err;
  auto NewBase = B.Reserve(NewSize);
  if (!NewBase)
    return NewBase.takeError();
  Base = *NewBase;
  Size = NewSize;
  return Error::success();
}

bool SlabPool::contains(ExecutorAddr A, uint64_t Bytes) const {
  return Size && A >= Base && Bytes <= Size && A - Base <= Size - Bytes;
}

Error SlabPool::release() {
  if (!Size)
    return Error::success();
  uint64_t Old = Size;
  Size = 0;
  InUse = 0;
  return B.Release(Base, Old);
}

} // namespace catalyst::remote
