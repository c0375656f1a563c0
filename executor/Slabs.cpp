//===- Slabs.cpp - Executor memory a session's inputs land in -------------===//

#include "Slabs.h"

#include "MemoryBudget.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {
constexpr uint64_t HugePage = 2 << 20;
}

Slabs &Slabs::get() {
  static Slabs S;
  return S;
}

Expected<char *> Slabs::reserve(uint64_t Bytes) {
  if (Bytes == 0 || Bytes > (uint64_t(1) << 46))
    return createStringError(inconvertibleErrorCode(), "cannot reserve a slab of %llu bytes",
                             (unsigned long long)Bytes);
  uint64_t Usable = (Bytes + HugePage - 1) / HugePage * HugePage;
  size_t Length = Usable + HugePage;
  if (auto Err = MemoryBudget::get().take(Length, "a launch slab"))
    return Err;
  void *Start = ::mmap(nullptr, Length, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Start == MAP_FAILED) {
    int Errno = errno;
    MemoryBudget::get().give(Length);
    return createStringError(std::error_code(Errno, std::generic_category()),
                             "cannot reserve a slab of %llu bytes: %s", (unsigned long long)Bytes,
                             std::strerror(Errno));
  }
  auto Aligned = (reinterpret_cast<uintptr_t>(Start) + HugePage - 1) / HugePage * HugePage;
  char *Base = reinterpret_cast<char *>(Aligned);
  ::madvise(Base, Usable, MADV_HUGEPAGE);
  std::lock_guard<std::mutex> Lock(M);
  ByBase[Base] = {Start, Length, Usable};
  return Base;
}

Error Slabs::release(char *Base) {
  Mapping Map;
  {
    std::lock_guard<std::mutex> Lock(M);
    auto It = ByBase.find(Base);
    if (It == ByBase.end())
      return createStringError(inconvertibleErrorCode(), "%p is not a slab of this session",
                               static_cast<void *>(Base));
    Map = It->second;
    ByBase.erase(It);
  }
  ::munmap(Map.Start, Map.Length);
  MemoryBudget::get().give(Map.Length);
  return Error::success();
}

bool Slabs::contains(const char *P, uint64_t Bytes) const {
  std::lock_guard<std::mutex> Lock(M);
  auto It = ByBase.upper_bound(const_cast<char *>(P));
  if (It == ByBase.begin())
    return false;
  --It;
  uint64_t Offset = P - It->first;
  return Offset <= It->second.Usable && Bytes <= It->second.Usable - Offset;
}

} // namespace catalyst::remote::executor
