//===- RemoteCAPI.cpp - The C ABI over the engine -------------------------===//
//
// Handles, argument checks and failure reporting; everything else is the
// engine's. Each call's work returns an Error; the exported functions, one
// set per prefix, report it at the very end, once every cleanup is done:
// __catalyst__remote__* through its failure handler (default: print and
// abort), __catalyst__executor__* by throwing, as Catalyst's runtime does,
// unless its caller installed a handler. Functions that cannot fail are
// defined once and aliased.
//
//===----------------------------------------------------------------------===//

#include "catalyst/remote/RemoteCAPI.h"

#include "Target.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using namespace catalyst::remote;
using catalyst::remote::capi::Target;
using catalyst::remote::capi::TargetStats;
using llvm::Error;
using llvm::Expected;

namespace {

thread_local std::string LastError;

// What __catalyst__executor__* throws where Catalyst's runtime throws its
// RuntimeException: a std::runtime_error whose what() is the message a
// failure handler would get.
class CallFailed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// How one prefix's functions report a failure: through the handler its
// caller installed, else its default. Any thread may install a handler
// (atomic) while others report, each on its own thread.
class Reporter {
public:
  explicit Reporter(bool Throws) : Throws(Throws) {}

  void setHandler(void (*H)(const char *)) { Handler = H; }

  // Records Err as this thread's last error and reports it; returns only
  // when an installed handler returns.
  void report(Error Err) {
    LastError = llvm::toString(std::move(Err));
    if (auto *H = Handler.load())
      return H(LastError.c_str());
    if (Throws)
      throw CallFailed(LastError);
    std::fprintf(stderr, "catalyst-remote: %s\n", LastError.c_str());
    std::abort();
  }

  // V's value, or Failed once its error is reported.
  template <typename T> T valueOr(Expected<T> V, T Failed) {
    if (V)
      return *V;
    report(V.takeError());
    return Failed;
  }

  // 0, or Failed once Err is reported.
  template <typename T> T statusOr(Error Err, T Failed) {
    if (!Err)
      return 0;
    report(std::move(Err));
    return Failed;
  }

  void check(Error Err) {
    if (Err)
      report(std::move(Err));
  }

private:
  std::atomic<void (*)(const char *)> Handler{nullptr};
  const bool Throws;
};

Reporter RemoteApi(/*Throws=*/false);
Reporter ExecutorApi(/*Throws=*/true);

Error callError(const char *Call, const llvm::Twine &Message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::Twine(Call) + ": " + Message);
}

Error inCall(const char *Call, Error Err) {
  if (!Err)
    return Err;
  return callError(Call, llvm::toString(std::move(Err)));
}

// Live sessions and pools (targets) by handle and by address, and async
// launches by token.
class Registry {
public:
  static Registry &get() {
    static Registry R;
    return R;
  }

  std::mutex M;
  std::map<int64_t, std::shared_ptr<Target>> Sessions;
  std::map<std::string, int64_t> ByAddress;
  // A token does not keep its target: one closed before the await makes
  // the await fail, saying so.
  std::map<int64_t, std::pair<std::weak_ptr<Target>, uint64_t>> Tokens;
  int64_t NextHandle = 1;
  int64_t NextToken = 1;
  OutputAllocator Outputs;

  std::shared_ptr<Target> find(int64_t Handle) {
    std::lock_guard<std::mutex> Lock(M);
    auto It = Sessions.find(Handle);
    return It == Sessions.end() ? nullptr : It->second;
  }

  // A live session for Address, or its stale handle (to be replaced).
  int64_t liveHandle(const std::string &Address) {
    auto It = ByAddress.find(Address);
    if (It != ByAddress.end() && Sessions.at(It->second)->connected())
      return It->second;
    return 0;
  }
};

Expected<std::shared_ptr<Target>> sessionFor(int64_t Handle, const char *Call) {
  if (auto S = Registry::get().find(Handle))
    return S;
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

std::vector<MemrefArg> memrefArgs(size_t N, void *const *Descs, const size_t *Ranks,
                                  const size_t *ElemSizes) {
  std::vector<MemrefArg> Args(N);
  for (size_t I = 0; I < N; ++I)
    Args[I] = {Descs[I], Ranks[I], ElemSizes[I]};
  return Args;
}

Expected<int64_t> openSession(const char *Addr) {
  if (!Addr || !*Addr)
    return callError("open", "empty executor address");
  auto &R = Registry::get();
  OutputAllocator Outputs;
  {
    std::lock_guard<std::mutex> Lock(R.M);
    if (int64_t Live = R.liveHandle(Addr))
      return Live;
    Outputs = R.Outputs;
  }
  // Connecting may take up to the handshake timeout; the process's other
  // sessions go on meanwhile, so the registry is not held.
  auto Opened = Target::open(Addr, Outputs);
  if (!Opened)
    return inCall("open", Opened.takeError());
  std::lock_guard<std::mutex> Lock(R.M);
  // Another thread opened the same address meanwhile: share its session
  // (ours closes once the lock is released).
  if (int64_t Live = R.liveHandle(Addr))
    return Live;
  int64_t Handle = R.NextHandle++;
  R.Sessions[Handle] = std::move(*Opened);
  R.ByAddress[Addr] = Handle;
  return Handle;
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

// A launch's arguments as the C ABI receives them.
struct CLaunch {
  const char *Entry, *Object;
  size_t NumInputs;
  void *const *InputDescs;
  const size_t *InputRanks, *InputElemSizes;
  size_t NumOutputs;
  void *const *OutputDescs;
  const size_t *OutputRanks, *OutputElemSizes;
  void *const *IntoBuffers = nullptr; // launch_into only
  const size_t *IntoBytes = nullptr;
};

// The engine's view of a C launch, and the arrays backing it.
struct EngineLaunch {
  std::vector<MemrefArg> Inputs, Outputs;
  std::vector<llvm::MutableArrayRef<char>> Into;
  LaunchCall Call;
};

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
  Out.Inputs = memrefArgs(C.NumInputs, C.InputDescs, C.InputRanks, C.InputElemSizes);
  Out.Outputs = memrefArgs(C.NumOutputs, C.OutputDescs, C.OutputRanks, C.OutputElemSizes);
  if (C.IntoBuffers)
    for (size_t I = 0; I < C.NumOutputs; ++I)
      Out.Into.emplace_back(static_cast<char *>(C.IntoBuffers[I]),
                            C.IntoBuffers[I] ? C.IntoBytes[I] : 0);
  Out.Call = {C.Entry, C.Object ? C.Object : "", Out.Inputs, Out.Outputs, Out.Into};
  return Error::success();
}

// Leaves the output descriptors zeroed when it fails.
Error runLaunch(int64_t Handle, const CLaunch &C, const char *Call) {
  zeroOutputs(C.NumOutputs, C.OutputDescs, C.OutputRanks);
  auto S = sessionFor(Handle, Call);
  if (!S)
    return S.takeError();
  EngineLaunch L;
  if (auto Err = toLaunchCall(C, Call, L))
    return Err;
  return inCall(Call, (*S)->launch(L.Call));
}

Expected<int64_t> queueLaunch(int64_t Handle, const CLaunch &C, const char *Call) {
  zeroOutputs(C.NumOutputs, C.OutputDescs, C.OutputRanks);
  auto S = sessionFor(Handle, Call);
  if (!S)
    return S.takeError();
  EngineLaunch L;
  if (auto Err = toLaunchCall(C, Call, L))
    return Err;
  uint64_t Ticket = (*S)->launchAsync(L.Call);
  auto &R = Registry::get();
  std::lock_guard<std::mutex> Lock(R.M);
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
    std::lock_guard<std::mutex> Lock(R.M);
    auto It = R.Tokens.find(Token);
    if (It == R.Tokens.end())
      return Error::success();
    Pending = std::move(It->second);
    R.Tokens.erase(It);
  }
  std::shared_ptr<Target> S = Pending.first.lock();
  if (!S)
    return callError("await", "the session of launch token " + std::to_string(Token) +
                                  " was closed before the launch was awaited");
  return inCall("await", S->await(Pending.second));
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
                     "cannot allocate " + std::to_string(Result->size()) + " bytes for the result");
  std::memcpy(Buf, Result->data(), Result->size());
  *OutBuf = Buf;
  if (OutSize)
    *OutSize = Result->size();
  return Error::success();
}

// Closing a session that is not open is harmless.
Error closeSession(int64_t Handle) {
  auto &R = Registry::get();
  std::shared_ptr<Target> S;
  {
    std::lock_guard<std::mutex> Lock(R.M);
    auto It = R.Sessions.find(Handle);
    if (It == R.Sessions.end())
      return Error::success();
    S = std::move(It->second);
    R.Sessions.erase(It);
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

CLaunch syncLaunch(const char *Entry, const char *Object, size_t NumInputs, void *const *InputDescs,
                   const size_t *InputRanks, const size_t *InputElemSizes, size_t NumOutputs,
                   void *const *OutputDescs, const size_t *OutputRanks,
                   const size_t *OutputElemSizes) {
  return {Entry,          Object,     NumInputs,   InputDescs,  InputRanks,
          InputElemSizes, NumOutputs, OutputDescs, OutputRanks, OutputElemSizes};
}

} // namespace

#define CATALYST_REMOTE_API extern "C" __attribute__((visibility("default")))
#define CATALYST_EXECUTOR_ALIAS(Name)                                                              \
  extern "C" __attribute__((visibility("default"), alias("__catalyst__remote__" #Name)))

// Each function that can fail, once per prefix: the same work, reported the
// prefix's way.
#define CATALYST_REMOTE_LAUNCH_PARAMS                                                              \
  int64_t session, const char *entry_symbol, const char *object, size_t num_inputs,                \
      void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,         \
      size_t num_outputs, void *const *output_descs, const size_t *output_ranks,                   \
      const size_t *output_elem_sizes
#define CATALYST_REMOTE_LAUNCH_ARGS                                                                \
  entry_symbol, object, num_inputs, input_descs, input_ranks, input_elem_sizes, num_outputs,       \
      output_descs, output_ranks, output_elem_sizes

#define CATALYST_REMOTE_DEFINE_CALLS(PREFIX, API)                                                  \
  CATALYST_REMOTE_API int64_t PREFIX##open(const char *addr) {                                     \
    return API.valueOr<int64_t>(openSession(addr), 0);                                             \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##send_binary(int64_t session, const char *path,               \
                                                  uint32_t format) {                               \
    return API.statusOr<int64_t>(sendBinary(session, path, format), -1);                           \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##launch(CATALYST_REMOTE_LAUNCH_PARAMS) {                         \
    API.check(runLaunch(session, syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS), "launch"));              \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##launch_into(                                                    \
      CATALYST_REMOTE_LAUNCH_PARAMS, void *const *output_buffers, const size_t *output_bytes) {    \
    CLaunch C = syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS);                                           \
    C.IntoBuffers = output_buffers;                                                                \
    C.IntoBytes = output_bytes;                                                                    \
    API.check(runLaunch(session, C, "launch_into"));                                               \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##launch_async(int64_t session, const char *entry_symbol,      \
                                                   const char *object) {                           \
    CLaunch C = syncLaunch(entry_symbol, object, 0, nullptr, nullptr, nullptr, 0, nullptr,         \
                           nullptr, nullptr);                                                      \
    return API.valueOr<int64_t>(queueLaunch(session, C, "launch_async"), 0);                       \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##launch_async_memrefs(CATALYST_REMOTE_LAUNCH_PARAMS) {        \
    CLaunch C = syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS);                                           \
    return API.valueOr<int64_t>(queueLaunch(session, C, "launch_async_memrefs"), 0);               \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##await(int64_t token) {                                          \
    API.check(awaitLaunch(token));                                                                 \
  }                                                                                                \
  CATALYST_REMOTE_API int32_t PREFIX##call_wrapper(int64_t session, const char *symbol,            \
                                                   const char *args_buf, size_t args_size,         \
                                                   void **out_buf, size_t *out_size) {             \
    return API.statusOr<int32_t>(                                                                  \
        callWrapper(session, symbol, args_buf, args_size, out_buf, out_size), 1);                  \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##close(int64_t session) {                                     \
    return API.statusOr<int64_t>(closeSession(session), -1);                                       \
  }                                                                                                \
  CATALYST_REMOTE_API int32_t PREFIX##stats(int64_t session, struct catalyst_remote_stats *out) {  \
    return API.statusOr<int32_t>(readStats(session, out), -1);                                     \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##set_failure_handler(void (*handler)(const char *)) {            \
    API.setHandler(handler);                                                                       \
  }

CATALYST_REMOTE_DEFINE_CALLS(__catalyst__remote__, RemoteApi)
CATALYST_REMOTE_DEFINE_CALLS(__catalyst__executor__, ExecutorApi)

CATALYST_REMOTE_API void __catalyst__remote__free_result(void *buf) {
  std::free(buf);
}

CATALYST_REMOTE_API const char *__catalyst__remote__last_error(void) {
  return LastError.c_str();
}

CATALYST_REMOTE_API void __catalyst__remote__set_output_allocator(void *(*alloc)(size_t),
                                                                  void (*release)(void *)) {
  auto &R = Registry::get();
  std::lock_guard<std::mutex> Lock(R.M);
  R.Outputs = {alloc, alloc ? release : nullptr};
}

CATALYST_EXECUTOR_ALIAS(free_result) void __catalyst__executor__free_result(void *);
CATALYST_EXECUTOR_ALIAS(last_error) const char *__catalyst__executor__last_error(void);
CATALYST_EXECUTOR_ALIAS(set_output_allocator)
void __catalyst__executor__set_output_allocator(void *(*)(size_t), void (*)(void *));
