//===- Calls.cpp - The work of every C ABI call ---------------------------===//

#include "Calls.h"

#include "Target.h"
#include "catalyst/remote/Failure.h"
#include "sync/Mutex.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote::capi {

using llvm::Error;
using llvm::Expected;

namespace {

thread_local std::string LastError;

// Most of the C ABI's own checks are of its caller's arguments.
Error callError(const char *Call, const llvm::Twine &Message,
                FailureKind Kind = FailureKind::BadArgument) {
  return makeFailure(Kind, llvm::Twine(Call) + ": " + Message);
}

Error inCall(const char *Call, Error Err) {
  return withContext(Call, std::move(Err));
}

// Live sessions and pools (targets) by handle and by address, and async
// launches by token.
class Registry {
public:
  static Registry &get() {
    static Registry R;
    return R;
  }

  sync::Mutex M;
  std::map<int64_t, std::shared_ptr<Target>> Sessions GUARDED_BY(M);
  std::map<std::string, int64_t> ByAddress GUARDED_BY(M);
  // A token does not keep its target: one closed before the await makes
  // the await fail, saying so.
  std::map<int64_t, std::pair<std::weak_ptr<Target>, uint64_t>> Tokens GUARDED_BY(M);
  // A resident does not keep its target either; its handle goes with its
  // target's (closeTarget).
  struct Held {
    std::weak_ptr<Target> Owner;
    Resident R;
  };
  std::map<int64_t, Held> Residents GUARDED_BY(M);
  int64_t NextHandle GUARDED_BY(M) = 1;
  int64_t NextToken GUARDED_BY(M) = 1;
  int64_t NextResident GUARDED_BY(M) = 1;
  OutputAllocator Outputs GUARDED_BY(M);

  // Registers a target; Address, when given, makes it the one shared by
  // openShared callers of that address.
  int64_t add(std::shared_ptr<Target> T, const char *Address) REQUIRES(M) {
    int64_t Handle = NextHandle++;
    Sessions[Handle] = std::move(T);
    if (Address)
      ByAddress[Address] = Handle;
    return Handle;
  }

  bool issued(int64_t Handle) {
    sync::MutexLock Lock(M);
    return Handle > 0 && Handle < NextHandle;
  }

  std::shared_ptr<Target> find(int64_t Handle) {
    sync::MutexLock Lock(M);
    auto It = Sessions.find(Handle);
    return It == Sessions.end() ? nullptr : It->second;
  }

  // A live session for Address, or its stale handle (to be replaced).
  int64_t liveHandle(const std::string &Address) REQUIRES(M) {
    auto It = ByAddress.find(Address);
    if (It != ByAddress.end() && Sessions.at(It->second)->connected())
      return It->second;
    return 0;
  }
};

// A handle issued before and no longer live was closed: a caller racing
// its own close() hears that, not that its handle is bad.
Expected<std::shared_ptr<Target>> sessionFor(int64_t Handle, const char *Call) {
  auto &R = Registry::get();
  if (auto S = R.find(Handle))
    return S;
  if (R.issued(Handle))
    return callError(Call, "session handle " + std::to_string(Handle) + " was closed",
                     FailureKind::Closed);
  return callError(Call, "unknown session handle " + std::to_string(Handle));
}

void zeroOutputs(size_t N, void *const *Descs, const size_t *Ranks) {
  for (size_t I = 0; Descs && Ranks && I < N; ++I)
    if (Descs[I])
      std::memset(Descs[I], 0, (3 + 2 * Ranks[I]) * sizeof(int64_t));
}

void copyStats(const LaunchStats &S, catalyst_remote_launch_stats &Out) {
  const PhaseTimes &P = S.Phases;
  Out = {S.RoundTrips,        S.Messages,  S.BytesSent,     S.BytesReceived, S.HostCopyBytes,
         S.ExecutorCopyBytes, S.SlabInUse, S.SlabHighWater, P.PlanNs,        P.SendNs,
         P.CopyInNs,          P.KernelNs,  P.CopyOutNs,     P.ReceiveNs,     P.RewriteNs};
}

void memrefArgs(size_t N, void *const *Descs, const size_t *Ranks, const size_t *ElemSizes,
                llvm::SmallVectorImpl<MemrefArg> &Args) {
  Args.resize(N);
  for (size_t I = 0; I < N; ++I)
    Args[I] = {Descs[I], Ranks[I], ElemSizes[I]};
}

// The registry's entry for resident Handle, or why there is none; What
// prefixes the reason ("input 2: ").
Expected<Registry::Held> findResident(int64_t Handle, const char *Call, const std::string &What) {
  auto &R = Registry::get();
  sync::MutexLock Lock(R.M);
  auto It = R.Residents.find(Handle);
  if (It != R.Residents.end())
    return It->second;
  return callError(Call, What + (Handle > 0 && Handle < R.NextResident
                                     ? "resident handle " + std::to_string(Handle) +
                                           " was released, or its session closed"
                                     : "unknown resident handle " + std::to_string(Handle)));
}

// Resident handle Handle, given as input Index of a launch on T.
Expected<Resident> residentOf(const std::shared_ptr<Target> &T, int64_t Handle, const char *Call,
                              size_t Index) {
  std::string What = "input " + std::to_string(Index) + ": ";
  auto Found = findResident(Handle, Call, What);
  if (!Found)
    return Found.takeError();
  if (Found->Owner.lock() != T)
    return callError(Call, What + "resident handle " + std::to_string(Handle) +
                               " belongs to another session");
  return std::move(Found->R);
}

// The engine's view of a C launch, and the arrays backing it.
// Inline room for the arguments of most launches: a launch through the C
// ABI allocates nothing here.
struct EngineLaunch {
  llvm::SmallVector<MemrefArg, 8> Inputs, Outputs;
  llvm::SmallVector<llvm::MutableArrayRef<char>, 8> Into;
  // Copies of the input residents' handles, and the handles kept outputs
  // get: sized once, so that pointers into them stay put.
  llvm::SmallVector<Resident, 0> Residents, Kept;
  llvm::SmallVector<Resident *, 0> Keep;
  LaunchCall Call;
};

// Input I of C, when it names a resident of T.
Error residentInputs(const std::shared_ptr<Target> &T, const CLaunch &C, const char *Call,
                     EngineLaunch &Out) {
  Out.Residents.resize(C.NumInputs);
  for (size_t I = 0; I < C.NumInputs; ++I) {
    if (C.InputResidents[I] == 0)
      continue;
    auto R = residentOf(T, C.InputResidents[I], Call, I);
    if (!R)
      return R.takeError();
    Out.Residents[I] = std::move(*R);
    Out.Inputs[I].Kept = &Out.Residents[I];
  }
  return Error::success();
}

// Checks the arrays and builds the engine's view of the call.
Error toLaunchCall(const CLaunch &C, const char *Call, EngineLaunch &Out) {
  if (!C.Entry || !*C.Entry)
    return callError(Call, "empty entry symbol");
  if (C.NumInputs && (!C.InputDescs || !C.InputRanks || !C.InputElemSizes))
    return callError(Call, std::to_string(C.NumInputs) + " inputs but a null input array");
  if (C.NumOutputs && (!C.OutputDescs || !C.OutputRanks || !C.OutputElemSizes))
    return callError(Call, std::to_string(C.NumOutputs) + " outputs but a null output array");
  if (C.NumOutputs && (!C.IntoBuffers != !C.IntoBytes))
    return callError(Call, "output buffers without their sizes, or sizes without buffers");
  memrefArgs(C.NumInputs, C.InputDescs, C.InputRanks, C.InputElemSizes, Out.Inputs);
  memrefArgs(C.NumOutputs, C.OutputDescs, C.OutputRanks, C.OutputElemSizes, Out.Outputs);
  if (C.IntoBuffers)
    for (size_t I = 0; I < C.NumOutputs; ++I)
      Out.Into.emplace_back(static_cast<char *>(C.IntoBuffers[I]),
                            C.IntoBuffers[I] ? C.IntoBytes[I] : 0);
  if (C.KeptOutputs) {
    Out.Kept.resize(C.NumOutputs);
    for (size_t I = 0; I < C.NumOutputs; ++I)
      Out.Keep.push_back(C.KeptOutputs[I] ? &Out.Kept[I] : nullptr);
  }
  Out.Call = {C.Entry, C.Object ? C.Object : "", Out.Inputs, Out.Outputs, Out.Into, Out.Keep};
  return Error::success();
}

} // namespace

const char *lastError() {
  return LastError.c_str();
}

void setLastError(std::string Message) {
  LastError = std::move(Message);
}

Expected<int64_t> openShared(const char *Addr) {
  if (!Addr || !*Addr)
    return callError("open", "empty executor address");
  auto &R = Registry::get();
  OutputAllocator Outputs;
  {
    sync::MutexLock Lock(R.M);
    if (int64_t Live = R.liveHandle(Addr))
      return Live;
    Outputs = R.Outputs;
  }
  // Connecting may take up to the handshake timeout; the process's other
  // sessions go on meanwhile, so the registry is not held.
  auto Opened = Target::open(Addr, Outputs);
  if (!Opened)
    return inCall("open", Opened.takeError());
  sync::MutexLock Lock(R.M);
  // Another thread opened the same address meanwhile: share its session
  // (ours closes once the lock is released).
  if (int64_t Live = R.liveHandle(Addr))
    return Live;
  return R.add(std::move(*Opened), Addr);
}

Expected<int64_t> openOwn(const char *Addr, const PoolOptions &Opts) {
  if (!Addr || !*Addr)
    return callError("open", "empty executor address");
  auto Opened = Target::open(Addr, Opts);
  if (!Opened)
    return inCall("open", Opened.takeError());
  auto &R = Registry::get();
  sync::MutexLock Lock(R.M);
  return R.add(std::move(*Opened), nullptr);
}

// An empty path is nothing to send, as in Catalyst's runtime.
Error sendBinary(int64_t Handle, const char *Path, uint32_t Format) {
  auto S = sessionFor(Handle, "send_binary");
  if (!S)
    return S.takeError();
  if (!Path || !*Path)
    return Error::success();
  return inCall("send_binary", (*S)->sendBinary(Path, static_cast<BinaryFormat>(Format)));
}

// The target of a launch and the engine's view of it, its outputs zeroed
// first so that a failure leaves them so.
static Expected<std::shared_ptr<Target>> startLaunch(int64_t Handle, const CLaunch &C,
                                                     const char *Call, EngineLaunch &L) {
  zeroOutputs(C.NumOutputs, C.OutputDescs, C.OutputRanks);
  auto S = sessionFor(Handle, Call);
  if (!S)
    return S.takeError();
  if (auto Err = toLaunchCall(C, Call, L))
    return Err;
  if (C.InputResidents)
    if (auto Err = residentInputs(*S, C, Call, L))
      return Err;
  return S;
}

// Registers R, of target T, under a handle of its own.
static int64_t addResident(const std::shared_ptr<Target> &T, Resident R) {
  auto &Reg = Registry::get();
  sync::MutexLock Lock(Reg.M);
  int64_t Handle = Reg.NextResident++;
  Reg.Residents[Handle] = {T, std::move(R)};
  return Handle;
}

// A kept output's entry holds its new resident's handle once the launch
// succeeded, 0 otherwise.
Error runLaunch(int64_t Handle, const CLaunch &C, const char *Call) {
  EngineLaunch L;
  auto S = startLaunch(Handle, C, Call, L);
  Error Err = S ? inCall(Call, (*S)->launch(L.Call)) : S.takeError();
  for (size_t I = 0; C.KeptOutputs && I < C.NumOutputs; ++I)
    if (C.KeptOutputs[I])
      C.KeptOutputs[I] = !Err && I < L.Kept.size() ? addResident(*S, std::move(L.Kept[I])) : 0;
  return Err;
}

Expected<int64_t> queueLaunch(int64_t Handle, const CLaunch &C, const char *Call) {
  EngineLaunch L;
  auto S = startLaunch(Handle, C, Call, L);
  if (!S)
    return S.takeError();
  uint64_t Ticket = (*S)->launchAsync(L.Call);
  auto &R = Registry::get();
  sync::MutexLock Lock(R.M);
  int64_t Token = R.NextToken++;
  R.Tokens[Token] = {*S, Ticket};
  return Token;
}

// A token never issued, or awaited before, is nothing to wait for, as in
// Catalyst's runtime.
Error awaitLaunch(int64_t Token) {
  auto &R = Registry::get();
  std::pair<std::weak_ptr<Target>, uint64_t> Pending;
  {
    sync::MutexLock Lock(R.M);
    auto It = R.Tokens.find(Token);
    if (It == R.Tokens.end())
      return Error::success();
    Pending = std::move(It->second);
    R.Tokens.erase(It);
  }
  std::shared_ptr<Target> S = Pending.first.lock();
  if (!S)
    return callError("await",
                     "the session of launch token " + std::to_string(Token) +
                         " was closed before the launch was awaited",
                     FailureKind::Closed);
  return inCall("await", S->await(Pending.second));
}

Expected<int64_t> uploadTensor(int64_t Handle, void *Desc, size_t Rank, size_t ElemSize) {
  auto S = sessionFor(Handle, "upload");
  if (!S)
    return S.takeError();
  auto R = (*S)->upload({Desc, Rank, ElemSize});
  if (!R)
    return inCall("upload", R.takeError());
  return addResident(*S, std::move(*R));
}

// The target and the handle of a resident, which the registry still holds.
static Expected<std::pair<std::shared_ptr<Target>, Resident>> heldResident(int64_t Handle,
                                                                           const char *Call) {
  auto Found = findResident(Handle, Call, "");
  if (!Found)
    return Found.takeError();
  auto T = Found->Owner.lock();
  if (!T)
    return callError(Call,
                     "the session of resident handle " + std::to_string(Handle) + " was closed",
                     FailureKind::Closed);
  return std::make_pair(std::move(T), std::move(Found->R));
}

Error fetchResident(int64_t Handle, void *Desc, size_t Rank, size_t ElemSize, void *Buffer,
                    size_t Bytes) {
  zeroOutputs(1, &Desc, &Rank);
  auto Held = heldResident(Handle, "fetch");
  if (!Held)
    return Held.takeError();
  llvm::MutableArrayRef<char> Into(static_cast<char *>(Buffer), Buffer ? Bytes : 0);
  return inCall("fetch", Held->first->fetch(Held->second, {Desc, Rank, ElemSize}, Into));
}

// The handle goes whatever the executor says: a resident it no longer
// holds is not one to release again.
Error releaseResident(int64_t Handle) {
  auto Held = heldResident(Handle, "release");
  if (!Held)
    return Held.takeError();
  {
    auto &R = Registry::get();
    sync::MutexLock Lock(R.M);
    R.Residents.erase(Handle);
  }
  return inCall("release", Held->first->release(Held->second));
}

// As in Catalyst's runtime: the outputs are cleared first, a null out_buf
// discards the result, and an empty result is a null buffer.
Error callWrapper(int64_t Handle, const char *Symbol, const char *Args, size_t ArgsSize,
                  void **OutBuf, size_t *OutSize) {
  if (OutBuf)
    *OutBuf = nullptr;
  if (OutSize)
    *OutSize = 0;
  auto S = sessionFor(Handle, "call_wrapper");
  if (!S)
    return S.takeError();
  if (!Symbol || !*Symbol || (ArgsSize && !Args))
    return callError("call_wrapper", "needs a symbol, and args_buf when args_size > 0");
  auto Result = (*S)->callWrapper(Symbol, {Args, ArgsSize});
  if (!Result)
    return inCall("call_wrapper", Result.takeError());
  if (!OutBuf || Result->empty())
    return Error::success();
  void *Buf = std::malloc(Result->size());
  if (!Buf)
    return callError("call_wrapper",
                     "cannot allocate " + std::to_string(Result->size()) + " bytes for the result",
                     FailureKind::Other);
  std::memcpy(Buf, Result->data(), Result->size());
  *OutBuf = Buf;
  if (OutSize)
    *OutSize = Result->size();
  return Error::success();
}

// Closing a session that is not open is harmless.
Error closeTarget(int64_t Handle) {
  auto &R = Registry::get();
  std::shared_ptr<Target> S;
  {
    sync::MutexLock Lock(R.M);
    auto It = R.Sessions.find(Handle);
    if (It == R.Sessions.end())
      return Error::success();
    S = std::move(It->second);
    R.Sessions.erase(It);
    // Its residents go with its connection.
    for (auto Res = R.Residents.begin(); Res != R.Residents.end();)
      Res = Res->second.Owner.lock() == S ? R.Residents.erase(Res) : std::next(Res);
    auto A = R.ByAddress.find(S->address().str());
    if (A != R.ByAddress.end() && A->second == Handle)
      R.ByAddress.erase(A);
  }
  return inCall("close", S->close());
}

Error readStats(int64_t Handle, catalyst_remote_stats *Out) {
  auto S = sessionFor(Handle, "stats");
  if (!S)
    return S.takeError();
  if (!Out)
    return callError("stats", "null output");
  TargetStats Stats = (*S)->stats();
  Out->launches = Stats.Launches;
  copyStats(Stats.Last, Out->last);
  copyStats(Stats.Total, Out->total);
  Out->strategy = Stats.Strategy;
  Out->transport = Stats.Transport;
  return Error::success();
}

Expected<std::string> describeTarget(int64_t Handle) {
  auto S = sessionFor(Handle, "describe");
  if (!S)
    return S.takeError();
  return (*S)->describe();
}

Error startTrace(int64_t Handle, const char *Path) {
  auto S = sessionFor(Handle, "start_trace");
  if (!S)
    return S.takeError();
  if (!Path || !*Path)
    return callError("start_trace", "no path to trace to");
  return inCall("start_trace", (*S)->startTrace(Path));
}

Error stopTrace(int64_t Handle) {
  auto S = sessionFor(Handle, "stop_trace");
  if (!S)
    return S.takeError();
  return inCall("stop_trace", (*S)->stopTrace());
}

void setOutputAllocator(void *(*Alloc)(size_t), void (*Release)(void *)) {
  auto &R = Registry::get();
  sync::MutexLock Lock(R.M);
  R.Outputs = {Alloc, Alloc ? Release : nullptr};
}

} // namespace catalyst::remote::capi
