//===- Slabs.cpp - Executor memory a session's inputs land in -------------===//

#include "Slabs.h"

#include "MemoryBudget.h"
#include "wire/SharedMemory.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

constexpr uint64_t HugePage = 2 << 20;

uint64_t usableFor(uint64_t Bytes) {
  return (Bytes + HugePage - 1) / HugePage * HugePage;
}

Error tooLarge(uint64_t Bytes) {
  return createStringError(inconvertibleErrorCode(), "cannot reserve a slab of %llu bytes",
                           (unsigned long long)Bytes);
}

} // namespace

// Address space for Bytes and a huge page more, to align the slab on one;
// Fd's first Usable bytes mapped there when Fd is a memfd.
Expected<char *> Slabs::map(uint64_t Bytes, int Fd, uint64_t &Usable) {
  Usable = usableFor(Bytes);
  size_t Length = Usable + HugePage;
  if (auto Err = Budget.take(Length, "a launch slab"))
    return Err;
  void *Start = ::mmap(nullptr, Length, Fd < 0 ? PROT_READ | PROT_WRITE : PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  auto Aligned = (reinterpret_cast<uintptr_t>(Start) + HugePage - 1) / HugePage * HugePage;
  char *Base = reinterpret_cast<char *>(Aligned);
  if (Start != MAP_FAILED && Fd >= 0 &&
      ::mmap(Base, Usable, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, Fd, 0) == MAP_FAILED) {
    int Errno = errno;
    // Its own fresh reservation, whole: munmap cannot refuse it.
    ::munmap(Start, Length);
    Start = MAP_FAILED;
    errno = Errno;
  }
  if (Start == MAP_FAILED) {
    int Errno = errno;
    Budget.give(Length);
    return createStringError(std::error_code(Errno, std::generic_category()),
                             "cannot reserve a slab of %llu bytes: %s", (unsigned long long)Bytes,
                             std::strerror(Errno));
  }
  // A hint: refused (no transparent huge pages), the slab is as good.
  ::madvise(Base, Usable, MADV_HUGEPAGE);
  sync::MutexLock Lock(M);
  ByBase[Base] = {Start, Length, Usable, Fd >= 0};
  return Base;
}

Expected<char *> Slabs::reserve(uint64_t Bytes) {
  if (Bytes == 0 || Bytes > (uint64_t(1) << 46))
    return tooLarge(Bytes);
  uint64_t Usable;
  return map(Bytes, -1, Usable);
}

Expected<char *> Slabs::reserveShared(uint64_t Bytes, int &Fd, uint64_t &Usable) {
  if (Bytes == 0 || Bytes > (uint64_t(1) << 46))
    return tooLarge(Bytes);
  auto Memory = wire::createSealedMemory(usableFor(Bytes));
  if (!Memory)
    return Memory.takeError();
  auto Base = map(Bytes, *Memory, Usable);
  if (!Base) {
    ::close(*Memory);
    return Base.takeError();
  }
  Fd = *Memory;
  return Base;
}

Error Slabs::release(char *Base) {
  Mapping Map;
  {
    sync::MutexLock Lock(M);
    auto It = ByBase.find(Base);
    if (It == ByBase.end())
      return createStringError(inconvertibleErrorCode(), "%p is not a slab of this session",
                               static_cast<void *>(Base));
    Map = It->second;
    ByBase.erase(It);
  }
  // The mapping recorded when it was made, whole: munmap cannot refuse it.
  ::munmap(Map.Start, Map.Length);
  Budget.give(Map.Length);
  return Error::success();
}

const Slabs::Mapping *Slabs::find(const char *P, uint64_t Bytes) const {
  auto It = ByBase.upper_bound(const_cast<char *>(P));
  if (It == ByBase.begin())
    return nullptr;
  --It;
  uint64_t Offset = P - It->first;
  bool Inside = Offset <= It->second.Usable && Bytes <= It->second.Usable - Offset;
  return Inside ? &It->second : nullptr;
}

bool Slabs::Held::containsShared(const char *P, uint64_t Bytes) const {
  S.M.assertHeld(); // by Lock, as contains() says
  const Mapping *Map = S.find(P, Bytes);
  return Map && Map->Shared;
}

} // namespace catalyst::remote::executor
