//===- SharedPayloads.cpp - Launch payloads through shared memory ---------===//

#include "SharedPayloads.h"

#include "CheckedCall.h"
#include "copy/BulkCopy.h"
#include "wire/Mailbox.h"
#include "wire/Protocol.h"
#include "wire/SpsCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

// A slab the executor rounded up to its 2 MiB huge pages.
constexpr uint64_t SlabRounding = 2 << 20;
// Input slabs live one at a time (SlabPool replaces its slab); a few more
// cover a replacement in flight. More is an executor passing what nobody
// asked for.
constexpr size_t MaxInputSlabs = 4;

void unmap(const SharedMapping &M) {
  if (M.Base)
    // This mapping, whole: munmap fails only on arguments that are not one.
    ::munmap(M.Base, M.Bytes);
}

Error refusedSlab(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "the executor passed a shared slab that "
                                                     "this host refuses: " +
                                                         Why);
}

} // namespace

SharedPayloads::~SharedPayloads() {
  for (auto &[Base, Slab] : Inputs)
    unmap(Slab.Local);
  unmap(Area.Local);
}

size_t SharedPayloads::mappings() const {
  sync::MutexLock Lock(M);
  return Inputs.size() + (Area.Local.Base != nullptr);
}

SlabPool::Backend SharedPayloads::wrap(SlabPool::Backend B) {
  auto Shared = std::make_shared<SlabPool::Backend>(std::move(B));
  SlabPool::Backend Wrapped;
  Wrapped.Reserve = [this, Shared](uint64_t Bytes) -> Expected<ExecutorAddr> {
    auto Base = Shared->Reserve(Bytes);
    if (!Base)
      return Base.takeError();
    if (Error Err = expect(*Base, Bytes))
      return joinErrors(std::move(Err), Shared->Release(*Base, Bytes));
    return Base;
  };
  Wrapped.Release = [this, Shared](ExecutorAddr Base, uint64_t Bytes) {
    forget(Base);
    return Shared->Release(Base, Bytes);
  };
  return Wrapped;
}

Error SharedPayloads::expect(ExecutorAddr Base, uint64_t Bytes) const {
  sync::MutexLock Lock(M);
  if (resolve(Base, Bytes))
    return Error::success();
  return createStringError(inconvertibleErrorCode(),
                           "the executor reserved a slab of %llu bytes at 0x%llx without passing "
                           "it to this host",
                           (unsigned long long)Bytes, (unsigned long long)Base.getValue());
}

void SharedPayloads::forget(ExecutorAddr Base) {
  sync::MutexLock Lock(M);
  auto It = Inputs.find(Base.getValue());
  if (It == Inputs.end())
    return;
  unmap(It->second.Local);
  Inputs.erase(It);
}

char *SharedPayloads::resolve(ExecutorAddr A, uint64_t Bytes) const {
  auto Within = [&](const Mapped &S) -> char * {
    uint64_t Offset = A.getValue() - S.Base;
    bool Inside = S.Local.Base && A.getValue() >= S.Base && Offset <= S.Local.Bytes &&
                  Bytes <= S.Local.Bytes - Offset;
    return Inside ? S.Local.Base + Offset : nullptr;
  };
  auto It = Inputs.upper_bound(A.getValue());
  if (It != Inputs.begin())
    if (char *P = Within(std::prev(It)->second))
      return P;
  return Within(Area);
}

// Addresses name one place each: a slab may not overlap a mapping it does
// not replace (the output area replaces the output area).
bool SharedPayloads::overlaps(uint64_t Base, uint64_t Bytes, bool Input) const {
  auto Meets = [&](const Mapped &S) {
    return S.Local.Base && Base < S.Base + S.Local.Bytes && S.Base < Base + Bytes;
  };
  return (Input && Meets(Area)) || llvm::any_of(Inputs, [&](auto &In) { return Meets(In.second); });
}

Error SharedPayloads::accept(ArrayRef<char> Plan, std::vector<int> Fds, SocketTransport *T) {
  Error Err = Fds.size() == 1
                  ? adoptSlab(Plan, Fds[0], T)
                  : refusedSlab(Twine(Fds.size()) + " descriptors came with it, not one");
  for (int Fd : Fds)
    ::close(Fd); // mapped, or refused
  return Err;
}

void SharedPayloads::adopt(SocketTransport &T, ArrayRef<char> Plan, std::vector<int> Fds) {
  if (Error Err = accept(Plan, std::move(Fds), &T))
    T.closeWith(toString(std::move(Err)) + "; this end closed the connection", FailureKind::Other);
}

// The mailbox is the transport's, for as long as it lasts; nothing in it
// is an address this host resolves.
Error SharedPayloads::adoptMailbox(uint64_t Bytes, int Fd, SocketTransport *T) {
  if (Bytes != Mailbox::Bytes)
    return refusedSlab(formatv("a mailbox of {0} bytes, not {1}", Bytes, Mailbox::Bytes).str());
  if (!T)
    return refusedSlab("it is a mailbox, and no session takes it here");
  auto Mapping = mapSealedMemory(Fd, Bytes, Mailbox::Bytes, /*Writable=*/true);
  if (!Mapping)
    return refusedSlab(toString(Mapping.takeError()));
  auto Box = std::make_unique<Mailbox>(*Mapping, Mailbox::End::Host);
  if (Error Err = T->attachMailbox(std::move(Box), /*PeerReads=*/true))
    return refusedSlab(toString(std::move(Err)));
  return Error::success();
}

Error SharedPayloads::adoptSlab(ArrayRef<char> Plan, int Fd, SocketTransport *T) {
  uint8_t Kind = 0;
  ExecutorAddr Base;
  uint64_t Bytes = 0;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!spsWellFormed<SPSSharedSlab>(Plan.data(), Plan.size()) ||
      !SPSSharedSlab::deserialize(IB, Kind, Base, Bytes) || Kind > uint8_t(SharedSlabKind::Mailbox))
    return refusedSlab("its description is malformed");
  if (Kind == uint8_t(SharedSlabKind::Mailbox))
    return adoptMailbox(Bytes, Fd, T);
  bool Input = Kind == uint8_t(SharedSlabKind::Input);
  uint64_t Limit = Input ? SlabCap + SlabRounding : AreaCap;
  if (Base.getValue() + Bytes < Base.getValue())
    return refusedSlab(formatv("{0} bytes at {1:x} wrap around", Bytes, Base.getValue()).str());
  sync::MutexLock Lock(M);
  if ((Input && Inputs.size() >= MaxInputSlabs) || overlaps(Base.getValue(), Bytes, Input))
    return refusedSlab(
        formatv("at {0:x}, it overlaps another, or too many are mapped", Base.getValue()).str());
  // The executor reads the output area (its results); this host only reads.
  auto Mapping = mapSealedMemory(Fd, Bytes, Limit, /*Writable=*/Input);
  if (!Mapping)
    return refusedSlab(toString(Mapping.takeError()));
  if (Input) {
    Inputs[Base.getValue()] = {*Mapping, Base.getValue()};
    return Error::success();
  }
  unmap(Area.Local);
  Area = {*Mapping, Base.getValue()};
  return Error::success();
}

Error SharedPayloads::open(ExecutorProcessControl &EPC) {
  auto &Symbols = EPC.getBootstrapSymbolsMap();
  auto Open = Symbols.find(MailboxOpenName), Instance = Symbols.find(SharedSlabsInstanceName);
  if (Open == Symbols.end() || Instance == Symbols.end())
    return Error::success();
  Error Result = Error::success();
  if (auto Err = callChecked<SPSMailboxOpenSig>(EPC, Open->second, MailboxOpenName, Result,
                                                Instance->second))
    return joinErrors(std::move(Err), std::move(Result));
  return Result;
}

Error SharedPayloads::send(SocketTransport &T, uint64_t SeqNo, ArrayRef<char> Plan,
                           ArrayRef<PayloadPart> Parts, ArrayRef<ExecutorAddr> Places,
                           LaunchStats &Stats) {
  assert(Parts.size() == Places.size() && "a place per input");
  {
    sync::MutexLock Lock(M);
    for (size_t I = 0; I < Parts.size(); ++I) {
      const PayloadPart &P = Parts[I];
      char *To = P.Bytes ? resolve(Places[I], P.Bytes) : nullptr;
      if (P.Bytes && !To)
        return createStringError(inconvertibleErrorCode(),
                                 "input %zu's place in the executor's slab is not mapped here", I);
      if (P.Packer) {
        for (char *At = To; !P.Packer->done();)
          At += P.Packer->pack(At, To + P.Bytes - At);
        continue; // counted as packed (ZeroCopyTransfer)
      }
      if (P.Bytes)
        copy::copyBulk(To, P.Data, P.Bytes);
      Stats.HostCopyBytes += P.Bytes;
    }
  }
  return T.sendWithPayload(PayloadOpcode::SharedLaunch, SeqNo, Plan, {});
}

Error SharedPayloads::receive(PayloadOpcode OpC, ArrayRef<char> Plan, uint64_t PayloadBytes,
                              HostOutputs &Outputs, ZeroCopyResult &R, LaunchStats &Stats,
                              std::vector<iovec> &Dst) {
  if (OpC == PayloadOpcode::SharedResult && !PayloadBytes)
    return receiveShared(Plan, Outputs, R, Stats);
  return decodeZeroCopyResult(Plan, PayloadBytes, Outputs, R, Dst);
}

Error SharedPayloads::receiveShared(ArrayRef<char> Plan, HostOutputs &Outputs, ZeroCopyResult &R,
                                    LaunchStats &Stats) {
  sync::MutexLock Lock(M);
  Copies.clear();
  auto Resolve = [this](ExecutorAddr A, uint64_t Bytes)
                     REQUIRES(M) -> const char * { return resolve(A, Bytes); };
  if (auto Err = decodeSharedResult(Plan, Outputs, R, Resolve, Copies))
    return Err;
  for (const SharedCopy &C : Copies) {
    copy::copyBulk(C.To, C.From, C.Bytes);
    Stats.HostCopyBytes += C.Bytes;
  }
  return Error::success();
}

} // namespace catalyst::remote
