//===- SessionSetup.cpp - Opening a session: connect, EPC, transfer -------===//
//
// Session::Impl's setup: the authenticated connection, the EPC and code
// linker over it, the liveness handshake and the choice of a transfer
// strategy. Runs once, in open, before any other thread sees the session.
//
//===----------------------------------------------------------------------===//

#include "../trace/SessionTrace.h"
#include "../trace/TraceSlot.h"
#include "../transfer/BatchedTransfer.h"
#include "../transfer/CheckedCall.h"
#include "../transfer/NaiveTransfer.h"
#include "../transfer/OutputForecast.h"
#include "../transfer/PhaseClock.h"
#include "../transfer/SharedPayloads.h"
#include "../transfer/ZeroCopyTransfer.h"
#include "CodeLinker.h"
#include "ExecutorInfo.h"
#include "LaunchArguments.h"
#include "LaunchProfile.h"
#include "LaunchQueue.h"
#include "LaunchWatchdog.h"
#include "OpenChannel.h"
#include "SentAssets.h"
#include "SessionImpl.h"
#include "TaskPool.h"
#include "catalyst/remote/Failure.h"
#include "catalyst/remote/Session.h"
#include "wire/Protocol.h"
#include "wire/Secret.h"
#include "wire/SocketTimeouts.h"
#include "wire/SocketTransport.h"
#include "wire/UnixSocket.h"

#include "llvm/ExecutionEngine/Orc/MapperJITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/Shared/OrcRTBridge.h"
#include "llvm/ExecutionEngine/Orc/SimpleRemoteEPC.h"
#include "llvm/ExecutionEngine/Orc/SimpleRemoteMemoryMapper.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

namespace {

Expected<std::unique_ptr<jitlink::JITLinkMemoryManager>> createCodeMemory(SimpleRemoteEPC &EPC,
                                                                          uint64_t SlabSize) {
  SimpleRemoteMemoryMapper::SymbolAddrs SAs;
  if (auto Err = EPC.getBootstrapSymbols(
          {{SAs.Instance, rt::SimpleExecutorMemoryManagerInstanceName},
           {SAs.Reserve, rt::SimpleExecutorMemoryManagerReserveWrapperName},
           {SAs.Initialize, rt::SimpleExecutorMemoryManagerInitializeWrapperName},
           {SAs.Deinitialize, rt::SimpleExecutorMemoryManagerDeinitializeWrapperName},
           {SAs.Release, rt::SimpleExecutorMemoryManagerReleaseWrapperName}}))
    return Err;
  return MapperJITLinkMemoryManager::CreateWithMapper<SimpleRemoteMemoryMapper>(SlabSize, EPC, SAs);
}

} // namespace

// Connects, and when tracing, writes how it went, failed or not.
Error Session::Impl::open() {
  TraceSlot::Held T;
  if (!Opts.TracePath.empty()) {
    auto Made = SessionTrace::create(Opts.TracePath, Address);
    if (!Made)
      return Made.takeError();
    // No other thread sees the session yet: the slot is empty.
    auto Started = Tracing.start(std::move(*Made));
    if (!Started)
      return Started.takeError();
    T = std::move(*Started);
  }
  Opening.Start = PhaseClock::now();
  Error Err = connect(T.get());
  if (!Err && Transport)
    Protection = Transport->protection();
  if (T)
    T->opened(Opening, Chosen, messageOf(Err));
  return Err;
}

// Trace, when not null, has the executor's clock read once connected.
Error Session::Impl::connect(SessionTrace *Trace) {
  if (!Opts.Secret.empty())
    if (auto Err = wire::checkSecret(Opts.Secret.reveal(), "the session's options"))
      return Err;
  auto By = std::chrono::steady_clock::now() + Opts.HandshakeTimeout;
  auto L = openChannel(Address, Opts, By);
  // The secret was needed to authenticate, and is no more: the session
  // lets go of its share, so that it is wiped once the caller's is gone.
  Proved = !Opts.Secret.empty();
  Opts.Secret = SecretBytes();
  if (!L)
    return L.takeError();
  Stats.Transport = L->Kind;
  Opening.Connected = PhaseClock::now();
  // Until the liveness timeout replaces it: the session's setup, the
  // executor's first replies included, cannot outlast the handshake's
  // deadline, whoever does the reading.
  if (L->Tls)
    L->Tls->setReadTimeout(std::chrono::duration_cast<std::chrono::microseconds>(
        std::max(By - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(1))));
  else
    wire::setReadDeadline(L->Fd, By);
  Error Err = startEpc(std::move(*L));
  if (!Err)
    Err = startLiveness();
  if (!Err && Trace) {
    Opening.SetUp = PhaseClock::now();
    Trace->syncClock(ES->getExecutorProcessControl());
    Opening.Synced = PhaseClock::now();
  }
  if (!Err || std::chrono::steady_clock::now() < By)
    return Err;
  return makeFailure(FailureKind::Timeout,
                     "cannot open a session with " + Address +
                         ": the executor did not complete the session's setup within " +
                         Twine(Opts.HandshakeTimeout.count()) +
                         " ms (SessionOptions::HandshakeTimeout): " + toString(std::move(Err)));
}

// The EPC over the authenticated link Over (which it takes over), the
// linker, and the transfer strategy, which may ask the executor to set up.
Error Session::Impl::startEpc(Channel Over) {
  SimpleRemoteEPC::Setup S;
  uint64_t SlabSize = Opts.CodeSlabSize;
  S.CreateMemoryManager = [SlabSize](SimpleRemoteEPC &EPC) {
    return createCodeMemory(EPC, SlabSize);
  };
  wire::TransportOptions TOpts;
  TOpts.MaxMessageSize = Opts.MaxMessageSize;
  TOpts.ReadOnDemand = true; // the setup message is waiting: the handshake saw it
  if (Stats.Transport == TransportKind::Local) {
    TOpts.AcceptDescriptors = true; // shared slabs come so
    TOpts.Spin = wire::localSpin();
  }
  auto Pool = std::make_unique<TaskPool>();
  Tasks = Pool.get();
  auto EPC = SimpleRemoteEPC::Create<wire::SocketTransport>(std::move(Pool), std::move(S), Over.Fd,
                                                            TOpts, std::move(Over.Tls), &Transport);
  if (!EPC) {
    Tasks = nullptr;
    return withContext("handshake with " + Address + " failed", EPC.takeError());
  }
  ES = std::make_unique<ExecutionSession>(std::move(*EPC));
  auto L = CodeLinker::Create(*ES);
  if (!L)
    return L.takeError();
  Linker = std::move(*L);
  ES->setErrorReporter(
      [Linker = Linker.get()](Error Err) { Linker->noteReportedError(std::move(Err)); });
  return chooseTransfer();
}

// Asks the executor for heartbeats while it works on a request, and from
// then on bounds every wait for a reply by the liveness timeout (which
// replaces the handshake's deadline on the socket). An executor without
// heartbeats (Catalyst's own) is waited for as long as it takes.
Error Session::Impl::startLiveness() {
  auto &EPC = ES->getExecutorProcessControl();
  auto It = EPC.getBootstrapSymbolsMap().find(wire::LivenessEnableName);
  if (Opts.LivenessTimeout.count() <= 0 || It == EPC.getBootstrapSymbolsMap().end()) {
    Transport->clearReadTimeout();
    return Error::success();
  }
  // Several heartbeats fit in the timeout: one late beat is not a death.
  // Never below the protocol's floor, and the timeout then holds four.
  auto Interval = std::max(Opts.LivenessTimeout / 4, wire::MinHeartbeatInterval);
  uint32_t Version = 0;
  if (auto Err = callChecked<wire::SPSLivenessEnableSig>(EPC, It->second, wire::LivenessEnableName,
                                                         Version, uint32_t(Interval.count())))
    return Err;
  if (Version != wire::LivenessVersion)
    return createStringError(
        inconvertibleErrorCode(),
        "the executor at %s sends heartbeats of version %u, this host reads %u", Address.c_str(),
        Version, wire::LivenessVersion);
  Transport->setReplyTimeout(std::max(Opts.LivenessTimeout, 4 * Interval));
  return Error::success();
}

Error Session::Impl::chooseTransfer() {
  auto &EPC = ES->getExecutorProcessControl();
  if (!hasSymbols(EPC, {wire::AllocName, wire::FreeName, wire::InvokeName, wire::StoreAssetName}))
    return createStringError(inconvertibleErrorCode(),
                             "%s is not a Catalyst executor: it lacks the catalyst_remote_* "
                             "services",
                             Address.c_str());
  if (auto Err = EPC.getBootstrapSymbols({{Upstream.Alloc, wire::AllocName},
                                          {Upstream.Free, wire::FreeName},
                                          {Upstream.Invoke, wire::InvokeName},
                                          {Upstream.StoreAsset, wire::StoreAssetName}}))
    return Err;
  Info = describeExecutor(EPC, Proved);
  // This project's services change with its protocol version: an executor
  // of another would misread this host's calls, or this host its replies.
  if (EPC.getBootstrapMap().count(wire::ProtocolKey) && Info.Protocol != wire::ProtocolVersion)
    return createStringError(inconvertibleErrorCode(),
                             "the executor at %s speaks catalyst-remote protocol %u, this host "
                             "%u: use the same release of catalyst-remote on both ends",
                             Address.c_str(), Info.Protocol, wire::ProtocolVersion);
  auto Offers = [&](Strategy S) { return llvm::is_contained(Info.Strategies, S); };
  Strategy Want = Opts.Strategy;
  if ((Want == Strategy::Auto || Want == Strategy::ZeroCopy) && Offers(Strategy::ZeroCopy))
    Chosen = Strategy::ZeroCopy;
  else if (Want != Strategy::Naive && Offers(Strategy::Batched))
    Chosen = Strategy::Batched;
  else
    Chosen = Strategy::Naive;
  auto T = makeTransfer(Chosen);
  if (!T)
    return T.takeError();
  Active = std::move(*T);
  return Error::success();
}

Expected<std::unique_ptr<Transfer>> Session::Impl::makeTransfer(catalyst::remote::Strategy S) {
  auto &EPC = ES->getExecutorProcessControl();
  if (S == Strategy::Naive)
    return std::make_unique<NaiveTransfer>(EPC, Upstream);
  if (S == Strategy::ZeroCopy)
    return ZeroCopyTransfer::Create(
        EPC, *Transport, Opts.SlabInitial, Opts.SlabCap,
        Stats.Transport == TransportKind::Local
            ? std::make_unique<SharedPayloads>(Opts.SlabCap, Transport->maxMessageSize())
            : makeSocketPayloads());
  BatchedTransfer::Services BS;
  if (auto Err = EPC.getBootstrapSymbols(
          {{BS.Invoke, wire::BatchedInvokeName}, {BS.Release, wire::BatchedReleaseName}}))
    return Err;
  auto Backend = executorMemoryBackend(EPC);
  if (!Backend)
    return Backend.takeError();
  return std::make_unique<BatchedTransfer>(EPC, BS, std::move(*Backend), Opts.SlabInitial,
                                           Opts.SlabCap);
}

} // namespace catalyst::remote
