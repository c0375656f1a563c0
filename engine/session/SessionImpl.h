//===- SessionImpl.h - What a session holds, and who may touch it ---------===//
//
// Session::Impl, shared by the files that implement a session: setting up
// the connection (SessionSetup.cpp) and everything done over it
// (Session.cpp). Nothing outside engine/session includes it.
//
// Threads: any number of callers use one session at once. Each member's
// comment says who owns it: set by open and read-only afterwards, or the
// lock that guards it. Life, taken shared by every call (hold()) and
// exclusively by close(), keeps the connection from being torn down under
// a call. The members under the other locks say GUARDED_BY, which Clang
// checks (tools/thread-safety-check); those under Life only say so in a
// comment, since hold() returns the lock it takes, which the analysis
// cannot follow from one function into its caller.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_ENGINE_SESSION_SESSIONIMPL_H
#define CATALYST_REMOTE_ENGINE_SESSION_SESSIONIMPL_H

#include "../trace/SessionTrace.h"
#include "../trace/TraceSlot.h"
#include "../transfer/HostOutputs.h"
#include "../transfer/LaunchTimeline.h"
#include "../transfer/NaiveTransfer.h"
#include "../transfer/OutputForecast.h"
#include "../transfer/ResidentRequests.h"
#include "../transfer/Transfer.h"
#include "CodeLinker.h"
#include "LaunchArguments.h"
#include "LaunchProfile.h"
#include "LaunchQueue.h"
#include "LaunchWatchdog.h"
#include "OpenChannel.h"
#include "ResidentTable.h"
#include "SentAssets.h"
#include "catalyst/remote/Session.h"
#include "sync/Mutex.h"

#include "llvm/ExecutionEngine/Orc/Core.h"

#include <atomic>
#include <memory>
#include <string>

namespace catalyst::remote {

namespace wire {
class SocketTransport;
} // namespace wire
class TaskPool;

class Session::Impl {
public:
  Impl(std::string Address, const SessionOptions &Opts) : Address(std::move(Address)), Opts(Opts) {
    if (!this->Opts.Outputs.Allocate)
      this->Opts.Outputs = defaultOutputAllocator();
    Forecast = std::make_unique<OutputForecast>(this->Opts.Outputs);
  }

  llvm::Error open();
  llvm::Error connect(SessionTrace *Trace);
  llvm::Error startEpc(Channel L);
  llvm::Error startLiveness();
  llvm::Error chooseTransfer();
  llvm::Expected<std::unique_ptr<Transfer>> makeTransfer(Strategy S);
  llvm::Error sendBinary(llvm::StringRef Path, BinaryFormat Format);
  llvm::Error sendAsset(llvm::StringRef Path);
  llvm::Expected<std::vector<char>> callWrapper(llvm::orc::ExecutorAddr Fn,
                                                llvm::ArrayRef<char> Args);
  llvm::Error launch(const LaunchCall &Call) EXCLUDES(LaunchMutex);
  llvm::Error startTrace(llvm::StringRef Path) EXCLUDES(LaunchMutex);
  llvm::Error launchMeasured(const LaunchCall &Call, HostOutputs &Outputs, LaunchStats &S,
                             LaunchTimeline &When, uint64_t &InputBytes) REQUIRES(LaunchMutex);
  llvm::Error ping() EXCLUDES(LaunchMutex);
  // Session::upload and release, under a hold() (SessionResidents.cpp).
  llvm::Expected<Resident> upload(const MemrefArg &In) EXCLUDES(LaunchMutex);
  llvm::Error release(Resident &R) EXCLUDES(LaunchMutex);
  llvm::Error fetch(const Resident &R, const MemrefArg &Out, llvm::MutableArrayRef<char> Into)
      EXCLUDES(LaunchMutex);
  // Whether Call names residents: as inputs, or outputs to keep.
  // Checks that this session can take Call's residents and gives each
  // output Call keeps an id in Outputs.
  llvm::Error keepOutputs(const LaunchCall &Call, HostOutputs &Outputs) REQUIRES(LaunchMutex);
  // After a launch: hands out the handles of the outputs it kept, or,
  // when it failed, has the executor free any it kept all the same.
  // recordKept returns the bytes it kept.
  uint64_t recordKept(const LaunchCall &Call, const HostOutputs &Outputs) REQUIRES(LaunchMutex);
  void forgetKept(const HostOutputs &Outputs) REQUIRES(LaunchMutex);
  // The strategy's resident requests, or a BadArgument failure saying why
  // this session has none.
  llvm::Expected<ResidentRequests *> residentRequests() REQUIRES(LaunchMutex);
  // Each with its traffic in S and the tensor's bytes in Bytes, for the
  // stats and the trace.
  llvm::Expected<Resident> uploadMeasured(const MemrefArg &In, LaunchStats &S, uint64_t &Bytes)
      REQUIRES(LaunchMutex);
  llvm::Error fetchMeasured(const Resident &R, HostOutputs &Outputs, LaunchStats &S,
                            uint64_t &Bytes) REQUIRES(LaunchMutex);
  llvm::Error releaseMeasured(Resident &R, LaunchStats &S, uint64_t &Bytes) REQUIRES(LaunchMutex);
  // One resident request (ResidentRequests::request), its traffic counted
  // into S as a launch's is.
  llvm::Expected<wire::ResidentReply>
  countedRequest(ResidentRequests &Requests, wire::PayloadOpcode OpC, llvm::ArrayRef<char> Plan,
                 llvm::ArrayRef<wire::PayloadPart> Parts, LaunchStats &S,
                 llvm::MutableArrayRef<char> Into = {}) REQUIRES(LaunchMutex);
  // Applies Count to the session's resident counters, and records what
  // the executor holds now.
  void countResidents(llvm::function_ref<void(ResidentStats &)> Count) REQUIRES(LaunchMutex);
  llvm::Error runLaunch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                        HostOutputs &Outputs, LaunchStats &S, LaunchTimeline &When)
      REQUIRES(LaunchMutex);
  llvm::Error explain(llvm::Error Err, const llvm::Twine &What);
  std::string endReason() const;
  void settle();
  llvm::Error close();
  llvm::Error tearDown();
  bool executorHungUp() const;
  // Null, with the reason in Err, when the session is closed; else the
  // shared hold on the connection every call works under.
  std::shared_lock<sync::SharedMutex> hold(llvm::Error &Err);

  // Set by open, read-only afterwards.
  std::string Address;
  SessionOptions Opts; // without the secret, once connected
  bool Proved = false; // both ends proved they know the secret
  catalyst::remote::Strategy Chosen = Strategy::Naive;
  OpenMarks Opening; // written by open only
  ExecutorInfo Info;
  // The transport's protection, kept so that reading it never touches a
  // transport close() may be tearing down.
  std::string Protection = "plain";

  // The connection and what works over it, from open until close, which
  // tears them down holding Life exclusively; every call that uses them
  // holds it shared (hold()) and first checks Closed.
  sync::SharedMutex Life;
  std::unique_ptr<llvm::orc::ExecutionSession> ES;
  wire::SocketTransport *Transport = nullptr;
  TaskPool *Tasks = nullptr; // owned by the EPC, like Transport
  std::unique_ptr<CodeLinker> Linker;
  UpstreamServices Upstream;
  std::unique_ptr<Transfer> Active;
  // Made by the first launch with a deadline (under LaunchMutex); closes the
  // transport when one passes, so close() ends it before the transport.
  std::unique_ptr<LaunchWatchdog> Watchdog;
  std::atomic<bool> Closed{false}; // set once, by the one close() that runs

  // Launches share the session's slab, so they take turns.
  sync::Mutex LaunchMutex;
  uint64_t Launched GUARDED_BY(LaunchMutex) = 0; // launches begun (traces number them)
  // Written at each launch's end under LaunchMutex and StatsMutex, read
  // under StatsMutex alone, so that stats() never waits for a launch; but
  // for Transport, set by open and read-only afterwards.
  SessionStats Stats;
  mutable sync::Mutex StatsMutex;
  // What the executor keeps for this session; forgotten with the
  // connection, which frees it there.
  ResidentTable Residents GUARDED_BY(LaunchMutex);
  // Made by the constructor; what it points to is used under LaunchMutex.
  std::unique_ptr<OutputForecast> Forecast PT_GUARDED_BY(LaunchMutex);

  // Held across a send, so that two sends of one name cannot cross.
  sync::Mutex AssetMutex;
  SentAssets Assets GUARDED_BY(AssetMutex);
  LaunchQueue Async; // locks its own

  // The trace now: each call takes it once (TraceSlot.h); started by open
  // (TracePath) or startTrace, which holds LaunchMutex while it reads the
  // executor's clock; outlives the connection. Locks its own.
  TraceSlot Tracing;
};

} // namespace catalyst::remote

#endif // CATALYST_REMOTE_ENGINE_SESSION_SESSIONIMPL_H
