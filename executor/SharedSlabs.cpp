//===- SharedSlabs.cpp - Memory the executor shares with its host ---------===//

#include "SharedSlabs.h"

#include "MemoryBudget.h"
#include "Slabs.h"
#include "copy/BulkCopy.h"
#include "wire/Mailbox.h"
#include "wire/SharedMemory.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

using namespace wire;

namespace {

constexpr uint64_t Alignment = 64;

uint64_t alignUp(uint64_t V) {
  return (V + Alignment - 1) / Alignment * Alignment;
}

// A dense part the host can read where it is.
bool inSharedSlab(const Slabs::Held &InSlabs, const PayloadPart &P) {
  return !P.Packer && InSlabs.containsShared(P.Data, P.Bytes);
}

} // namespace

Error SharedSlabs::notShared() const {
  return createStringError(inconvertibleErrorCode(),
                           "shared slabs need the executor's local socket; this connection is TCP");
}

Error SharedSlabs::pass(SharedSlabKind Kind, const char *Base, uint64_t Bytes, int Fd) {
  std::vector<char> Plan(SPSSharedSlab::size(uint8_t(Kind), ExecutorAddr::fromPtr(Base), Bytes));
  sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  SPSSharedSlab::serialize(OB, uint8_t(Kind), ExecutorAddr::fromPtr(Base), Bytes);
  return Transport->sendWithPayload(PayloadOpcode::SharedSlab, 0, Plan, {}, {Fd});
}

Expected<char *> SharedSlabs::reserve(uint64_t Bytes) {
  if (!Transport)
    return notShared();
  int Fd = -1;
  uint64_t Usable = 0;
  auto Base = Regions.reserveShared(Bytes, Fd, Usable);
  if (!Base)
    return Base.takeError();
  Error Err = pass(SharedSlabKind::Input, *Base, Usable, Fd);
  ::close(Fd); // the mappings on both sides hold the memory
  if (Err) {
    consumeError(Regions.release(*Base)); // just reserved: it is there to release
    return Err;
  }
  return Base;
}

// Counted against the memory budget for as long as the connection lasts:
// the transport holds the mapping until it goes, with the process.
Error SharedSlabs::openMailbox() {
  if (!Transport)
    return notShared();
  if (Transport->hasMailbox())
    return createStringError(inconvertibleErrorCode(), "the session's mailbox is open already");
  if (auto Err = Budget.take(Mailbox::Bytes, "the shared mailbox"))
    return Err;
  auto Fd = createSealedMemory(Mailbox::Bytes, "catalyst-remote-mailbox");
  if (!Fd) {
    Budget.give(Mailbox::Bytes);
    return Fd.takeError();
  }
  void *P = ::mmap(nullptr, Mailbox::Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *Fd, 0);
  if (P == MAP_FAILED) {
    int Errno = errno;
    ::close(*Fd);
    Budget.give(Mailbox::Bytes);
    return createStringError(std::error_code(Errno, std::generic_category()),
                             "cannot map the shared mailbox: %s", std::strerror(Errno));
  }
  auto Box = std::make_unique<Mailbox>(SharedMapping{static_cast<char *>(P), Mailbox::Bytes},
                                       Mailbox::End::Executor);
  Error Err = pass(SharedSlabKind::Mailbox, static_cast<char *>(P), Mailbox::Bytes, *Fd);
  ::close(*Fd); // the mappings on both sides hold the memory
  if (!Err)
    Err = Transport->attachMailbox(std::move(Box), /*PeerReads=*/false);
  if (Err)
    Budget.give(Mailbox::Bytes); // Box, unattached, unmaps it
  return Err;
}

// Doubling keeps the replacements few; the old area goes at once, since
// the host reads nothing of it any more (it copies each result out before
// it sends the next launch).
Error SharedSlabs::growOutputArea(uint64_t Bytes) {
  uint64_t NewBytes = std::max({Bytes, 2 * AreaBytes, uint64_t(1) << 20});
  NewBytes = (NewBytes + 4095) / 4096 * 4096;
  if (auto Err = Budget.take(NewBytes, "the shared output area"))
    return Err;
  auto Fd = createSealedMemory(NewBytes);
  void *P = Fd ? ::mmap(nullptr, NewBytes, PROT_READ | PROT_WRITE, MAP_SHARED, *Fd, 0) : MAP_FAILED;
  Error Err = !Fd ? Fd.takeError()
              : P == MAP_FAILED
                  ? createStringError(std::error_code(errno, std::generic_category()),
                                      "cannot map a shared output area of %llu bytes: %s",
                                      (unsigned long long)NewBytes, std::strerror(errno))
                  : pass(SharedSlabKind::Output, static_cast<char *>(P), NewBytes, *Fd);
  if (Fd)
    ::close(*Fd);
  if (Err) {
    if (P != MAP_FAILED)
      // Its own fresh mapping, whole: munmap cannot refuse it.
      ::munmap(P, NewBytes);
    Budget.give(NewBytes);
    return Err;
  }
  if (Area) {
    // The area mapped before, whole: munmap cannot refuse it.
    ::munmap(Area, AreaBytes);
    Budget.give(AreaBytes);
  }
  Area = static_cast<char *>(P);
  AreaBytes = NewBytes;
  return Error::success();
}

Error SharedSlabs::placeOutputs(ArrayRef<PayloadPart> Parts, std::vector<ExecutorAddr> &Where,
                                uint64_t &Copied) {
  if (!Transport)
    return notShared();
  uint64_t Needed = 0;
  SmallVector<bool, 8> InPlace(Parts.size()); // the host reads it where it is
  {
    auto InSlabs = Regions.hold();
    for (size_t I = 0; I < Parts.size(); ++I) {
      InPlace[I] = !Parts[I].Bytes || inSharedSlab(InSlabs, Parts[I]);
      if (!InPlace[I])
        Needed += alignUp(Parts[I].Bytes);
    }
  }
  if (Needed > AreaBytes)
    if (auto Err = growOutputArea(Needed))
      return Err;
  Where.clear();
  Copied = 0;
  uint64_t Offset = 0;
  for (size_t I = 0; I < Parts.size(); ++I) {
    const PayloadPart &P = Parts[I];
    if (InPlace[I]) {
      Where.push_back(P.Bytes ? ExecutorAddr::fromPtr(P.Data) : ExecutorAddr());
      continue;
    }
    char *Dst = Area + Offset;
    if (P.Packer)
      for (char *To = Dst; !P.Packer->done();)
        To += P.Packer->pack(To, Dst + P.Bytes - To);
    else
      copy::copyBulk(Dst, P.Data, P.Bytes);
    Where.push_back(ExecutorAddr::fromPtr(Dst));
    Offset += alignUp(P.Bytes);
    Copied += P.Bytes;
  }
  return Error::success();
}

Error SharedSlabs::sendResult(uint64_t SeqNo, ArrayRef<char> Plan, uint64_t OutputBytes,
                              ArrayRef<ExecutorAddr> Where) {
  std::vector<ExecutorAddr> At(Where.begin(), Where.end());
  std::vector<char> Whole(SPSSharedResult::size(Plan, OutputBytes, At));
  sps::SPSOutputBuffer OB(Whole.data(), Whole.size());
  SPSSharedResult::serialize(OB, Plan, OutputBytes, At);
  return Transport->sendWithPayload(PayloadOpcode::SharedResult, SeqNo, Whole, {});
}

} // namespace catalyst::remote::executor
