//===- Session.cpp - One host's session with one executor -----------------===//

#include "catalyst/remote/Session.h"

#include "../trace/SessionTrace.h"
#include "../trace/TraceSlot.h"
#include "../transfer/BatchedTransfer.h"
#include "../transfer/CheckedCall.h"
#include "../transfer/NaiveTransfer.h"
#include "../transfer/OutputForecast.h"
#include "../transfer/PhaseClock.h"
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
#include "WireCounters.h"
#include "catalyst/remote/Failure.h"
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

// Says why the connection ended, when it did: that, not ORC's generic
// "disconnecting", is what the caller needs to hear, and its kind what a
// program acts on.
Error Session::Impl::explain(Error Err, const Twine &What) {
  if (!Transport || !Transport->disconnected())
    return withContext(What, std::move(Err));
  // The connection's end explains Err (ORC's "disconnecting"), and is
  // what this says instead.
  consumeError(std::move(Err));
  return makeFailure(Transport->endKind(), What + ": the connection to the executor at " + Address +
                                               " closed" + endReason());
}

// Why the connection ended, as ", the executor saying: \"why\"" or as
// ": why" (this end's reason for closing it); the transport must be there.
std::string Session::Impl::endReason() const {
  if (std::string Said = Transport->hangupReason(); !Said.empty())
    return ", the executor saying: " + Said;
  std::string Why = Transport->closeReason();
  return Why.empty() ? " (its connection process exited or was killed)" : ": " + Why;
}

// Linking ends with ORC work of its own: tasks on the pool that may still
// send the executor a request and wait for its reply. Letting it all finish
// keeps it out of the next launch's counters. Quiet means no reply due and
// no task queued, running or finished since the pool was last seen idle:
// only those tasks send requests besides the caller.
void Session::Impl::settle() {
  while (Transport && !Transport->disconnected()) {
    uint64_t Finished = Tasks->waitIdle();
    if (Transport->repliesDue() == 0 && Tasks->idleSince(Finished))
      return;
    Transport->readUntil([this] { return Transport->repliesDue() == 0; });
  }
}

// The executor keeps assets by file name, so the host, which knows where
// each came from, refuses a second file under a name already taken, and sends
// a file again only when its bytes changed.
Error Session::Impl::sendAsset(StringRef Path) {
  sync::MutexLock Lock(AssetMutex);
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeFailure(FailureKind::BadArgument,
                       "cannot read asset '" + Path + "': " + Buf.getError().message());
  ArrayRef<char> Bytes((*Buf)->getBufferStart(), (*Buf)->getBufferSize());
  SentAsset Now = SentAsset::of(Path, (*Buf)->getBuffer());
  std::string Name = sys::path::filename(Path).str();
  auto Stored = Assets.isStored(Name, Now);
  if (!Stored || *Stored)
    return Stored.takeError();
  int32_t Rc = -1;
  if (auto Err =
          callChecked<wire::SPSStoreAssetSig>(ES->getExecutorProcessControl(), Upstream.StoreAsset,
                                              wire::StoreAssetName, Rc, Bytes, Name))
    return Err;
  if (Rc != 0)
    return createStringError(inconvertibleErrorCode(),
                             "the executor could not store asset '%s' (see its log)",
                             Path.str().c_str());
  Assets.record(Name, std::move(Now));
  return Error::success();
}

// Through the executor's own service where it has one, which reports a
// wrapper's out-of-band error; directly (errors lost) against upstream.
Expected<std::vector<char>> Session::Impl::callWrapper(ExecutorAddr Fn, ArrayRef<char> Args) {
  auto &EPC = ES->getExecutorProcessControl();
  ExecutorAddr Service;
  if (auto It = EPC.getBootstrapSymbolsMap().find(wire::CallWrapperName);
      It != EPC.getBootstrapSymbolsMap().end())
    Service = It->second;
  if (!Service) {
    auto R = EPC.callWrapper(Fn, Args);
    if (const char *Err = R.getOutOfBandError())
      return createStringError(inconvertibleErrorCode(), Err);
    return std::vector<char>(R.data(), R.data() + R.size());
  }
  Expected<std::vector<char>> Result((std::vector<char>()));
  if (auto Err = callChecked<wire::SPSCallWrapperSig>(EPC, Service, wire::CallWrapperName, Result,
                                                      Fn, Args))
    return Err;
  return Result;
}

// The transfer's launch, under the launch deadline when there is one.
Error Session::Impl::runLaunch(ExecutorAddr Entry, ArrayRef<CheckedInput> Inputs,
                               HostOutputs &Outputs, LaunchStats &S, LaunchTimeline &When) {
  if (Opts.LaunchTimeout.count() <= 0)
    return Active->launch(Entry, Inputs, Outputs, S, When);
  if (!Watchdog)
    Watchdog = std::make_unique<LaunchWatchdog>([this, Limit = Opts.LaunchTimeout] {
      Transport->closeWith(formatv("a launch did not finish within {0} ms "
                                   "(SessionOptions::LaunchTimeout); this end closed the "
                                   "connection, which ends the executor's connection process",
                                   Limit.count())
                               .str(),
                           FailureKind::Timeout);
    });
  Watchdog->arm(LaunchWatchdog::Clock::now() + Opts.LaunchTimeout);
  Error Err = Active->launch(Entry, Inputs, Outputs, S, When);
  Watchdog->disarm();
  return Err;
}

Error Session::Impl::launch(const LaunchCall &Call) {
  sync::MutexLock Lock(LaunchMutex);
  TraceSlot::Held Trace = Tracing.take();
  uint64_t Number = ++Launched;
  LaunchStats S;
  LaunchTimeline When;
  uint64_t InputBytes = 0;
  When.Plan = PhaseClock::now();
  HostOutputs Outputs(Call.Outputs, Opts.Outputs, Call.Into, Forecast.get(), Opts.MaxOutputBytes);
  Error Err = launchMeasured(Call, Outputs, S, When, InputBytes);
  When.End = PhaseClock::now();
  if (Trace)
    Trace->launched({Call.Entry, Call.Object, Chosen, Stats.Transport, S, When, Call.Inputs.size(),
                     Call.Outputs.size(), InputBytes, Outputs.bytesGiven(), messageOf(Err), Number,
                     uint64_t(count_if(Call.Inputs, [](const MemrefArg &A) { return A.Kept; })),
                     uint64_t(count_if(Call.Keep, [](const Resident *R) { return R; }))});
  return Err;
}

Error Session::Impl::launchMeasured(const LaunchCall &Call, HostOutputs &Outputs, LaunchStats &S,
                                    LaunchTimeline &When, uint64_t &InputBytes) {
  if (auto Err = checkOutputs(Call))
    return Err;
  ResidentTable *Kept = nullptr;
  if (Call.namesResidents()) {
    if (auto Err = keepOutputs(Call, Outputs))
      return Err;
    Kept = &Residents;
  }
  auto Inputs = checkInputs(Call.Inputs, Kept);
  if (!Inputs)
    return Inputs.takeError();
  for (const CheckedInput &In : *Inputs) {
    InputBytes += In.Layout.Bytes;
    if (In.Resident)
      S.ResidentBytes += Residents.shapeOf(In.Resident).Bytes;
  }
  uint64_t Request = Active->largestRequest(*Inputs);
  if (Request > Opts.MaxMessageSize)
    return makeFailure(FailureKind::BadArgument,
                       "launch of '" + Call.Entry + "' needs a message of about " + Twine(Request) +
                           " bytes; the limit is " + Twine(Opts.MaxMessageSize) +
                           " (SessionOptions::MaxMessageSize)");
  auto Entry = Linker->lookup(Call.Object, Call.Entry);
  if (!Entry)
    return Entry.takeError();
  S.Phases.PlanNs = nsSince(When.Plan);
  auto Before = WireCounters::of(*Transport);
  // No buffer is readied for an output that stays in the executor.
  auto Lent = lentOutputs(Call.Into, Call.Outputs.size());
  for (size_t I = 0; I < Lent.size(); ++I)
    Lent[I] = Lent[I] || Outputs.keptAs(I);
  Forecast->begin(Entry->getValue(), Call.Outputs, Lent);
  Error Err = runLaunch(*Entry, *Inputs, Outputs, S, When);
  // Counted failed or not: a trace shows what a failed launch sent.
  WireCounters::of(*Transport).addDelta(Before, S);
  if (Err) {
    Forecast->end(Entry->getValue(), {});
    forgetKept(Outputs);
    return explain(std::move(Err), "launch of '" + Call.Entry + "' failed");
  }
  When.Rewrite = PhaseClock::now();
  Outputs.commit();
  S.ResidentBytes += recordKept(Call, Outputs);
  S.Phases.RewriteNs = nsSince(When.Rewrite);
  Forecast->end(Entry->getValue(), Outputs.bytes());
  S.OutputsReady = Outputs.readyTaken();
  {
    sync::MutexLock Counting(StatsMutex);
    Stats.Launches++;
    Stats.Last = S;
    Stats.Total += S;
  }
  if (Opts.Profile)
    printProfile(Call.Entry, strategyName(Chosen), Stats.Transport, S);
  return Error::success();
}

// Reads the executor's clock in LaunchMutex's turn: the readings count in
// no launch's round trips, and a launch in flight ends first, untraced.
// Failures say their kind (Failure.h), which bindings raise by.
Error Session::Impl::startTrace(StringRef Path) {
  auto Fail = [&](Error Err) {
    return withContext("cannot start tracing the session with " + Address + " to '" + Path + "'",
                       std::move(Err));
  };
  if (Path.empty())
    return Fail(makeFailure(FailureKind::BadArgument, "the path is empty"));
  if (Error Err = Tracing.checkOff())
    return Fail(std::move(Err));
  Error Closed = Error::success();
  auto Held = hold(Closed);
  if (!Held)
    return Fail(makeFailure(FailureKind::Closed, toString(std::move(Closed))));
  auto Made = SessionTrace::create(Path, Address);
  if (!Made)
    return Fail(makeFailure(FailureKind::BadArgument, toString(Made.takeError())));
  sync::MutexLock Turn(LaunchMutex);
  auto Start = PhaseClock::now();
  (*Made)->syncClock(ES->getExecutorProcessControl());
  auto Started = Tracing.start(std::move(*Made));
  if (!Started)
    return Fail(Started.takeError());
  (*Started)->started(Start, Chosen);
  return Error::success();
}

// free(NULL) does nothing, on this project's executor as on Catalyst's:
// the call is one round trip and nothing else. It takes its turn with
// launches, so that no launch's counters include it.
Error Session::Impl::ping() {
  sync::MutexLock Lock(LaunchMutex);
  if (auto Err = callChecked<wire::SPSFreeSig>(ES->getExecutorProcessControl(), Upstream.Free,
                                               wire::FreeName, ExecutorAddr()))
    return explain(std::move(Err), "ping failed");
  return Error::success();
}

// Closing is safe from any thread at any time: queued async launches run
// to completion first, a call in flight on another thread is ended by
// closing the connection under it, and the teardown waits until no call
// holds the connection.
Error Session::Impl::close() {
  if (Closed)
    return Error::success();
  TraceSlot::Held Trace = Tracing.take();
  auto Start = PhaseClock::now();
  Error Err = Async.drain();
  if (Closed.exchange(true)) {
    // Another thread's close() tears down: returns once it has.
    std::unique_lock<sync::SharedMutex> Wait(Life);
    return Err;
  }
  std::unique_lock<sync::SharedMutex> Exclusive(Life, std::try_to_lock);
  if (!Exclusive) {
    if (Transport)
      Transport->closeWith("the session was closed while a call was in flight",
                           FailureKind::Closed);
    Exclusive.lock();
  }
  Err = joinErrors(std::move(Err), tearDown());
  if (Trace)
    Trace->closed(Start, messageOf(Err));
  return Err;
}

// Under Life, exclusively. The transfer goes after the EPC has ended, which
// stops the reader thread that calls into it, and before the EPC object
// (and its transport, which the transfer refers to) is destroyed.
Error Session::Impl::tearDown() {
  Watchdog.reset();
  Error Err = Error::success();
  if (Active && Transport && !Transport->disconnected())
    Err = Active->close();
  bool Lost = Transport && Transport->disconnected();
  if (ES) {
    Err = joinErrors(std::move(Err), ES->endSession());
    Lost = Lost || executorHungUp();
  }
  // The executor's end of the connection closed before this close or
  // during it (an executor stopping ends its idle sessions, saying so):
  // what the session held there went with its connection process, so
  // nothing is left to free, and the calls that found the connection gone
  // are not failures of this close.
  if (Lost)
    consumeError(std::move(Err));
  Active.reset();
  Linker.reset();
  ES.reset();
  Transport = nullptr; // both went with the EPC
  Tasks = nullptr;
  return Err;
}

// Whether the executor ended the connection saying why (a Hangup of its
// own): once this end has ended the session too, that alone tells the
// two apart.
bool Session::Impl::executorHungUp() const {
  return Transport && !Transport->hangupReason().empty();
}

std::shared_lock<sync::SharedMutex> Session::Impl::hold(Error &Err) {
  std::shared_lock<sync::SharedMutex> Held(Life);
  if (!Closed && Transport && !Transport->disconnected())
    return Held;
  // Closed by the user, or by the connection's end, which says why. The
  // call that met that end failed as its kind (explain()); this one only
  // finds the executor gone.
  bool Ended = !Closed && Transport;
  std::string Why = Ended ? " since its connection closed" + endReason() : "";
  Err = makeFailure(Ended ? FailureKind::ExecutorLost : FailureKind::Closed,
                    "the session with " + Address + " is closed" + Why);
  return {};
}

Session::Session(std::unique_ptr<Impl> I) : I(std::move(I)) {}

// A destructor has no one to tell; a caller that wants close()'s error
// calls it first, and a second close() is a no-op returning success.
Session::~Session() {
  consumeError(close());
}

Expected<std::unique_ptr<Session>> Session::open(StringRef Address, const SessionOptions &Options) {
  auto I = std::make_unique<Impl>(Address.str(), Options);
  if (auto Err = I->open()) {
    // Err says why the open failed; closing what it left adds nothing to act on.
    consumeError(I->close());
    return Err;
  }
  return std::unique_ptr<Session>(new Session(std::move(I)));
}

StringRef Session::address() const {
  return I->Address;
}

Strategy Session::strategy() const {
  return I->Chosen;
}

TransportKind Session::transport() const {
  return I->Stats.Transport; // set by open, read-only afterwards
}

std::string Session::protection() const {
  return I->Protection;
}

const ExecutorInfo &Session::executor() const {
  return I->Info;
}

Traffic Session::traffic() const {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  // A closed session carries nothing more; why it closed is not asked.
  consumeError(std::move(Closed));
  if (!Held)
    return {};
  return {I->Transport->bytesWritten(), I->Transport->bytesRead()};
}

Error Session::ping() {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held)
    return Closed;
  return I->ping();
}

SessionStats Session::stats() const {
  sync::MutexLock Lock(I->StatsMutex);
  return I->Stats;
}

bool Session::connected() const {
  Error Closed = Error::success();
  bool Up = bool(I->hold(Closed));
  // Whether the session is up is the answer; why it is not is not asked.
  consumeError(std::move(Closed));
  return Up;
}

Error Session::Impl::sendBinary(StringRef Path, BinaryFormat Format) {
  Error Closed = Error::success();
  auto Held = hold(Closed);
  if (!Held)
    return Closed;
  switch (Format) {
  case BinaryFormat::Object: {
    Error Err = Linker->addObject(Path);
    settle();
    return Err;
  }
  case BinaryFormat::Asset:
    if (auto Err = sendAsset(Path))
      return explain(std::move(Err), "sending asset '" + Path + "' failed");
    return Error::success();
  }
  return makeFailure(FailureKind::BadArgument, "unknown binary format " + Twine(unsigned(Format)) +
                                                   " for '" + Path +
                                                   "' (0 is an object, 1 an asset)");
}

Error Session::sendBinary(StringRef Path, BinaryFormat Format) {
  TraceSlot::Held Trace = I->Tracing.take();
  auto Start = PhaseClock::now();
  Error Err = I->sendBinary(Path, Format);
  bool Known = Format == BinaryFormat::Object || Format == BinaryFormat::Asset;
  if (Trace && Known)
    Trace->binarySent(Format == BinaryFormat::Object ? "link" : "asset", Path, Start,
                      messageOf(Err));
  return Err;
}

Expected<std::vector<char>> Session::callWrapper(StringRef Symbol, ArrayRef<char> Args) {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held)
    return Closed;
  auto Fn = I->Linker->lookup("", Symbol);
  if (!Fn)
    // A lookup the connection's end cut short says so, as a call does.
    return I->explain(Fn.takeError(), "call of '" + Symbol + "' failed");
  auto Result = I->callWrapper(*Fn, Args);
  if (!Result)
    return I->explain(Result.takeError(), "call of '" + Symbol + "' failed");
  return Result;
}

Error Session::launch(const LaunchCall &Call) {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held) {
    HostOutputs Zeroed(Call.Outputs, {});
    // Which launch, for one queued (launchAsync) before the session closed.
    return withContext("launch of '" + Call.Entry + "' failed", std::move(Closed));
  }
  return I->launch(Call);
}

Expected<Resident> Session::upload(const MemrefArg &In) {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held)
    return withContext("upload failed", std::move(Closed));
  return I->upload(In);
}

Error Session::fetch(const Resident &R, const MemrefArg &Out, MutableArrayRef<char> Into) {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held) {
    HostOutputs Zeroed(ArrayRef<MemrefArg>(Out), {});
    return withContext("fetch of resident " + Twine(R.id()) + " failed", std::move(Closed));
  }
  return I->fetch(R, Out, Into);
}

Error Session::release(Resident &R) {
  Error Closed = Error::success();
  auto Held = I->hold(Closed);
  if (!Held)
    return withContext("release of resident " + Twine(R.id()) + " failed", std::move(Closed));
  return I->release(R);
}

uint64_t Session::launchAsync(const LaunchCall &Call) {
  // The call's strings and arrays are the caller's; the job keeps copies.
  struct Copy {
    std::string Entry, Object;
    std::vector<MemrefArg> Inputs, Outputs;
    std::vector<MutableArrayRef<char>> Into;
    std::vector<Resident *> Keep;
  };
  auto C = std::make_shared<Copy>(Copy{Call.Entry.str(), Call.Object.str(), Call.Inputs.vec(),
                                       Call.Outputs.vec(), Call.Into.vec(), Call.Keep.vec()});
  return I->Async.submit([this, C] {
    return launch(LaunchCall{C->Entry, C->Object, C->Inputs, C->Outputs, C->Into, C->Keep});
  });
}

Error Session::await(uint64_t Ticket) {
  return I->Async.await(Ticket);
}

Error Session::startTrace(StringRef Path) {
  return I->startTrace(Path);
}

Error Session::stopTrace() {
  I->Tracing.stop();
  return Error::success();
}

Error Session::close() {
  return I->close();
}

} // namespace catalyst::remote
