//===- Services.cpp - What the executor offers the host ------------------===//
//
// Catalyst's four upstream services, with the same names and SPS signatures
// as its upstream executor, so its host runtime can drive this executor and
// this project's host can fall back to them against an upstream executor;
// then this project's own: call_wrapper, liveness, zero-copy's enable,
// slabs and shared slabs, the mailbox, batched, the clock.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include "Assets.h"
#include "BatchedService.h"
#include "ConnectionServices.h"
#include "CrashReporter.h"
#include "Heartbeat.h"
#include "Instances.h"
#include "wire/LocalOffer.h"
#include "wire/Protocol.h"
#include "wire/Residents.h"
#include "wire/SpsCheck.h"

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;
using namespace llvm::orc::shared;

namespace catalyst::remote::executor {

namespace {

ExecutorAddr allocBuffer(uint64_t Size) {
  return ExecutorAddr::fromPtr(std::malloc(Size));
}

void freeBuffer(ExecutorAddr A) {
  std::free(A.toPtr<void *>());
}

void invokeEntry(ExecutorAddr Entry, std::vector<ExecutorAddr> RvAv) {
  if (!Entry || RvAv.size() != 2) {
    errs() << "catalyst-remote-executor: invoke needs an entry and {rv, av}; ignored\n";
    return;
  }
  quietBeforeKernel();
  Entry.toPtr<void (*)(void *, void *)>()(RvAv[0].toPtr<void *>(), RvAv[1].toPtr<void *>());
}

int32_t storeAssetBytes(ArrayRef<char> Bytes, std::string Name) {
  if (auto Err = storeAsset(Bytes, Name)) {
    errs() << "catalyst-remote-executor: " << toString(std::move(Err)) << "\n";
    return -1;
  }
  return 0;
}

Expected<std::vector<char>> callWrapper(ExecutorAddr Fn, ArrayRef<char> Args) {
  if (!Fn)
    return createStringError(inconvertibleErrorCode(), "null wrapper function address");
  using WrapperFn = CWrapperFunctionBuffer (*)(const char *, size_t);
  WrapperFunctionBuffer Result(Fn.toPtr<WrapperFn>()(Args.data(), Args.size()));
  if (const char *Err = Result.getOutOfBandError())
    return createStringError(inconvertibleErrorCode(), Err);
  return std::vector<char>(Result.data(), Result.data() + Result.size());
}

// Answers with this executor's version whatever the host's: a host of
// another version learns that it was refused from the answer.
uint32_t enableLiveness(uint32_t IntervalMs) {
  Heartbeat::get().enable(std::chrono::milliseconds(IntervalMs));
  return wire::LivenessVersion;
}

Expected<uint32_t> enableZeroCopy(ExecutorAddr At, uint32_t HostVersion) {
  auto Service = instanceAt<ZeroCopyService>(At, "zero-copy launch service");
  if (!Service)
    return Service.takeError();
  return Service->enable(HostVersion);
}

// Read as late as the reply allows: the host takes the midpoint of its
// call as the moment this was read.
std::tuple<uint64_t, uint64_t> readClock() {
  auto Now = std::chrono::steady_clock::now().time_since_epoch();
  return {uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Now).count()),
          uint64_t(::getpid())};
}

std::vector<char> encodedVersion(uint32_t Version) {
  std::vector<char> Bytes(SPSArgList<wire::SPSProtocolValue>::size(Version));
  SPSOutputBuffer OB(Bytes.data(), Bytes.size());
  SPSArgList<wire::SPSProtocolValue>::serialize(OB, Version);
  return Bytes;
}

Expected<ExecutorAddr> reserveSlab(ExecutorAddr At, uint64_t Bytes) {
  auto Regions = instanceAt<Slabs>(At, "slab service");
  if (!Regions)
    return Regions.takeError();
  auto Base = Regions->reserve(Bytes);
  if (!Base)
    return Base.takeError();
  return ExecutorAddr::fromPtr(*Base);
}

Expected<ExecutorAddr> reserveSharedSlab(ExecutorAddr At, uint64_t Bytes) {
  auto Shared = instanceAt<SharedSlabs>(At, "shared slab service");
  if (!Shared)
    return Shared.takeError();
  auto Base = Shared->reserve(Bytes);
  if (!Base)
    return Base.takeError();
  return ExecutorAddr::fromPtr(*Base);
}

Error openMailbox(ExecutorAddr At) {
  auto Shared = instanceAt<SharedSlabs>(At, "shared slab service");
  if (!Shared)
    return Shared.takeError();
  return Shared->openMailbox();
}

Error releaseSlab(ExecutorAddr At, ExecutorAddr Base) {
  auto Regions = instanceAt<Slabs>(At, "slab service");
  if (!Regions)
    return Regions.takeError();
  return Regions->release(Base.toPtr<char *>());
}

// The C entry point the EPC calls for a service: checks and decodes
// SPSSig's arguments, calls Fn, encodes its result.
template <typename SPSSig, auto Fn> CWrapperFunctionBuffer serve(const char *Data, size_t Size) {
  return wire::handleChecked<SPSSig>(Data, Size, Fn).release();
}

// A bootstrap map value.
template <typename Tag, typename T> std::vector<char> encode(const T &Value) {
  std::vector<char> Bytes(SPSArgList<Tag>::size(Value));
  SPSOutputBuffer OB(Bytes.data(), Bytes.size());
  [[maybe_unused]] bool Ok = SPSArgList<Tag>::serialize(OB, Value);
  assert(Ok && "sized by SPS itself");
  return Bytes;
}

} // namespace

void addServices(StringMap<ExecutorAddr> &Symbols, StringMap<std::vector<char>> &BootstrapMap,
                 const ServiceOptions &Options, const ConnectionServices &Connection) {
  Symbols[wire::AllocName] = ExecutorAddr::fromPtr(&serve<wire::SPSAllocSig, allocBuffer>);
  Symbols[wire::FreeName] = ExecutorAddr::fromPtr(&serve<wire::SPSFreeSig, freeBuffer>);
  Symbols[wire::InvokeName] = ExecutorAddr::fromPtr(&serve<wire::SPSInvokeSig, invokeEntry>);
  Symbols[wire::StoreAssetName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSStoreAssetSig, storeAssetBytes>);
  if (Options.UpstreamOnly)
    return;
  Symbols[wire::CallWrapperName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSCallWrapperSig, callWrapper>);
  Symbols[wire::LivenessEnableName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSLivenessEnableSig, enableLiveness>);
  Connection.addBootstrapSymbols(Symbols);
  Symbols[wire::ZeroCopyEnableName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSZeroCopyEnableSig, enableZeroCopy>);
  Symbols[wire::SlabReserveName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSSlabReserveSig, reserveSlab>);
  Symbols[wire::SharedSlabReserveName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSSlabReserveSig, reserveSharedSlab>);
  Symbols[wire::SlabReleaseName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSSlabReleaseSig, releaseSlab>);
  Symbols[wire::MailboxOpenName] =
      ExecutorAddr::fromPtr(&serve<wire::SPSMailboxOpenSig, openMailbox>);
  Symbols[wire::BatchedInvokeName] = ExecutorAddr::fromPtr(&batchedInvokeWrapper);
  Symbols[wire::BatchedReleaseName] = ExecutorAddr::fromPtr(&batchedReleaseWrapper);
  Symbols[wire::ClockName] = ExecutorAddr::fromPtr(&serve<wire::SPSClockSig, readClock>);
  BootstrapMap[wire::ProtocolKey] = encodedVersion(wire::ProtocolVersion);
  BootstrapMap[wire::ZeroCopyKey] = encodedVersion(wire::ZeroCopyVersion);
  BootstrapMap[wire::ResidentsKey] = encodedVersion(wire::ResidentsVersion);
  BootstrapMap[wire::VersionKey] =
      encode<wire::SPSVersionValue>(std::string(CATALYST_REMOTE_VERSION));
  if (!Options.LocalOffer.empty())
    BootstrapMap[wire::LocalOfferKey] = Options.LocalOffer;
}

} // namespace catalyst::remote::executor
