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

// Counts a resident of Shape as Id against both caps; its footprint, or an
// error naming what refused it.
Expected<uint64_t> ResidentStore::take(uint64_t Id, const wire::TensorShape &Shape) {
  uint64_t Bytes = footprint(Shape.Bytes);
  if (Bytes < Shape.Bytes) // rounded past 2^64
    return createStringError(std::errc::not_enough_memory, "cannot keep a resident of %llu bytes",
                             (unsigned long long)Shape.Bytes);
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
  if (auto Err = Budget.take(Bytes, "a resident tensor"))
    return Err;
  return Bytes;
}

void ResidentStore::insert(uint64_t Id, uint64_t Bytes, const Resident &R) {
  Held += Bytes;
  Kept[Id] = R;
  Buffers.insert(R.Allocated);
}

Error ResidentStore::missing(uint64_t Id) {
  return createStringError(inconvertibleErrorCode(),
                           "resident %llu does not exist in this session (released already, "
                           "or never made)",
                           (unsigned long long)Id);
}

Expected<char *> ResidentStore::reserve(uint64_t Id, const wire::TensorShape &Shape) {
  auto Bytes = take(Id, Shape);
  if (!Bytes)
    return Bytes.takeError();
  void *Buffer = std::aligned_alloc(Alignment, *Bytes);
  if (!Buffer) {
    Budget.give(*Bytes);
    return createStringError(std::errc::not_enough_memory,
                             "cannot keep a resident of %llu bytes: out of memory",
                             (unsigned long long)Shape.Bytes);
  }
  insert(Id, *Bytes, {Buffer, static_cast<char *>(Buffer), Shape});
  return static_cast<char *>(Buffer);
}

Error ResidentStore::adopt(uint64_t Id, void *Allocated, char *Data,
                           const wire::TensorShape &Shape) {
  auto Bytes = take(Id, Shape);
  if (!Bytes)
    return Bytes.takeError();
  insert(Id, *Bytes, {Allocated, Data, Shape});
  return Error::success();
}

Error ResidentStore::release(uint64_t Id) {
  auto It = Kept.find(Id);
  if (It == Kept.end())
    return missing(Id);
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

Expected<const ResidentStore::Resident &> ResidentStore::get(uint64_t Id) const {
  if (const Resident *R = find(Id))
    return *R;
  return missing(Id);
}

} // namespace catalyst::remote::executor
