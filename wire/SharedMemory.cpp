//===- SharedMemory.cpp - Memory a host and its executor both map ---------===//

#include "SharedMemory.h"

#include "SysError.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

Error refused(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "a shared slab from the peer: " + Why);
}

constexpr int SizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;

} // namespace

Expected<int> createSealedMemory(uint64_t Bytes, const char *Name) {
  int Fd = ::memfd_create(Name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (Fd < 0)
    return sysError("creating a shared slab", errno);
  if (::ftruncate(Fd, off_t(Bytes)) != 0 ||
      ::fcntl(Fd, F_ADD_SEALS, SizeSeals | F_SEAL_SEAL) != 0) {
    int Errno = errno;
    ::close(Fd);
    return sysError("sizing a shared slab of " + Twine(Bytes) + " bytes", Errno);
  }
  return Fd;
}

Expected<SharedMapping> mapSealedMemory(int Fd, uint64_t Bytes, uint64_t Limit, bool Writable) {
  struct stat St {};
  if (::fstat(Fd, &St) != 0)
    return sysError("a shared slab from the peer", errno);
  if (!S_ISREG(St.st_mode))
    return refused("the descriptor is not a memory file");
  int Seals = ::fcntl(Fd, F_GET_SEALS);
  if (Seals < 0)
    return refused("the descriptor is not a memfd (it cannot be sealed)");
  if ((Seals & SizeSeals) != SizeSeals)
    return refused("its size is not sealed: the peer could shrink it under this process");
  if (St.st_size <= 0 || uint64_t(St.st_size) != Bytes)
    return refused("it has " + Twine(St.st_size) + " bytes, announced as " + Twine(Bytes));
  if (Bytes > Limit)
    return refused(Twine(Bytes) + " bytes, more than the " + Twine(Limit) + " allowed");
  void *P =
      ::mmap(nullptr, Bytes, Writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, Fd, 0);
  if (P == MAP_FAILED)
    return sysError("mapping a shared slab of " + Twine(Bytes) + " bytes", errno);
  return SharedMapping{static_cast<char *>(P), Bytes};
}

} // namespace catalyst::remote::wire
