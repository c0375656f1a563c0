//===- ResidentStore.cpp - Tensors one session keeps in the executor ------===//

#include "ResidentStore.h"

#include <cstdlib>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

constexpr uint64_t Alignment = 64;

// What a resident of Bytes takes: its buffer, rounded up to the alignment
// (an empty one still gets a buffer of its own).
uint64_t footprint(uint64_t Bytes) {
  return Bytes ? (Bytes + Alignment - 1) / Alignment * Alignment : Alignment;
}

} // namespace

ResidentStore::~ResidentStore() {
  for (auto &[Id, R] : Kept) {
    std::free(R.Allocated);
    Budget.give(footprint(R.Shape.Bytes));
  }
}

Error ResidentStore::take(uint64_t Id, uint64_t Bytes) {
  if (Kept.count(Id))
    return createStringError(inconvertibleErrorCode(),
                             "resident id %llu is in use in this session already",
                             (unsigned long long)Id);
  if (Bytes > Cap || Held > Cap - Bytes)
    return createStringError(std::errc::not_enough_memory,
                             "cannot keep a resident of %llu bytes: the session keeps %llu MiB "
                             "already, of this executor's per-session cap of %llu MiB "
                             "(--max-resident-mib)",
                             (unsigned long long)Bytes, (unsigned long long)(Held >> 20),
                             (unsigned long long)(Cap >> 20));
  return Budget.take(Bytes, "a resident tensor");
}

Expected<char *> ResidentStore::reserve(uint64_t Id, const wire::TensorShape &Shape) {
  uint64_t Bytes = footprint(Shape.Bytes);
  if (Bytes < Shape.Bytes) // rounded past 2^64
    return createStringError(std::errc::not_enough_memory, "cannot keep a resident of %llu bytes",
                             (unsigned long long)Shape.Bytes);
  if (auto Err = take(Id, Bytes))
    return Err;
  void *Buffer = std::aligned_alloc(Alignment, Bytes);
  if (!Buffer) {
    Budget.give(Bytes);
    return createStringError(std::errc::not_enough_memory,
                             "cannot keep a resident of %llu bytes: out of memory",
                             (unsigned long long)Shape.Bytes);
  }
  Held += Bytes;
  Kept[Id] = {Buffer, static_cast<char *>(Buffer), Shape};
  Buffers.insert(Buffer);
  return static_cast<char *>(Buffer);
}

Error ResidentStore::adopt(uint64_t Id, void *Allocated, char *Data,
                           const wire::TensorShape &Shape) {
  uint64_t Bytes = footprint(Shape.Bytes);
  if (Bytes < Shape.Bytes)
    return createStringError(std::errc::not_enough_memory, "cannot keep a resident of %llu bytes",
                             (unsigned long long)Shape.Bytes);
  if (auto Err = take(Id, Bytes))
    return Err;
  Held += Bytes;
  Kept[Id] = {Allocated, Data, Shape};
  Buffers.insert(Allocated);
  return Error::success();
}

Error ResidentStore::release(uint64_t Id) {
  auto It = Kept.find(Id);
  if (It == Kept.end())
    return createStringError(inconvertibleErrorCode(),
                             "resident %llu does not exist in this session (released already, "
                             "or never made)",
                             (unsigned long long)Id);
  uint64_t Bytes = footprint(It->second.Shape.Bytes);
  Buffers.erase(It->second.Allocated);
  std::free(It->second.Allocated);
  Kept.erase(It);
  Held -= Bytes;
  Budget.give(Bytes);
  return Error::success();
}

const ResidentStore::Resident *ResidentStore::find(uint64_t Id) const {
  auto It = Kept.find(Id);
  return It == Kept.end() ? nullptr : &It->second;
}

} // namespace catalyst::remote::executor
