//===- UpstreamServices.cpp - Catalyst's upstream executor services -------===//
//
// Same names and SPS signatures as Catalyst's upstream executor, so its host
// runtime can drive this executor and this project's host can fall back to
// them against an upstream executor.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include "../engine/wire/Protocol.h"
#include "Assets.h"
#include "BatchedService.h"
#include "Slabs.h"
#include "ZeroCopyService.h"

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

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

CWrapperFunctionBuffer callWrapperWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSCallWrapperSig>::handle(Data, Size, callWrapper).release();
}

uint32_t enableZeroCopy(uint32_t HostVersion) {
  ZeroCopyService::get().enable();
  return wire::ZeroCopyVersion;
}

Expected<ExecutorAddr> reserveSlab(uint64_t Bytes) {
  auto Base = Slabs::get().reserve(Bytes);
  if (!Base)
    return Base.takeError();
  return ExecutorAddr::fromPtr(*Base);
}

Error releaseSlab(ExecutorAddr Base) {
  return Slabs::get().release(Base.toPtr<char *>());
}

CWrapperFunctionBuffer zeroCopyEnableWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSZeroCopyEnableSig>::handle(Data, Size, enableZeroCopy).release();
}

CWrapperFunctionBuffer slabReserveWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSSlabReserveSig>::handle(Data, Size, reserveSlab).release();
}

CWrapperFunctionBuffer slabReleaseWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSSlabReleaseSig>::handle(Data, Size, releaseSlab).release();
}

CWrapperFunctionBuffer allocWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSAllocSig>::handle(Data, Size, allocBuffer).release();
}

CWrapperFunctionBuffer freeWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSFreeSig>::handle(Data, Size, freeBuffer).release();
}

CWrapperFunctionBuffer invokeWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSInvokeSig>::handle(Data, Size, invokeEntry).release();
}

CWrapperFunctionBuffer storeAssetWrapper(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSStoreAssetSig>::handle(Data, Size, storeAssetBytes).release();
}

} // namespace

void addServices(StringMap<ExecutorAddr> &Symbols, StringMap<std::vector<char>> &BootstrapMap,
                 const ServiceOptions &Options) {
  Symbols[wire::AllocName] = ExecutorAddr::fromPtr(&allocWrapper);
  Symbols[wire::FreeName] = ExecutorAddr::fromPtr(&freeWrapper);
  Symbols[wire::InvokeName] = ExecutorAddr::fromPtr(&invokeWrapper);
  Symbols[wire::StoreAssetName] = ExecutorAddr::fromPtr(&storeAssetWrapper);
  if (Options.UpstreamOnly)
    return;
  Symbols[wire::CallWrapperName] = ExecutorAddr::fromPtr(&callWrapperWrapper);
  Symbols[wire::ZeroCopyEnableName] = ExecutorAddr::fromPtr(&zeroCopyEnableWrapper);
  Symbols[wire::SlabReserveName] = ExecutorAddr::fromPtr(&slabReserveWrapper);
  Symbols[wire::SlabReleaseName] = ExecutorAddr::fromPtr(&slabReleaseWrapper);
  Symbols[wire::BatchedInvokeName] = ExecutorAddr::fromPtr(&batchedInvokeWrapper);
  Symbols[wire::BatchedReleaseName] = ExecutorAddr::fromPtr(&batchedReleaseWrapper);
  static_assert(wire::ZeroCopyVersion == wire::ProtocolVersion,
                "one encoded version serves both keys");
  std::vector<char> Version(SPSArgList<wire::SPSProtocolValue>::size(wire::ProtocolVersion));
  SPSOutputBuffer OB(Version.data(), Version.size());
  SPSArgList<wire::SPSProtocolValue>::serialize(OB, wire::ProtocolVersion);
  BootstrapMap[wire::ProtocolKey] = Version;
  BootstrapMap[wire::ZeroCopyKey] = std::move(Version);
}

} // namespace catalyst::remote::executor
