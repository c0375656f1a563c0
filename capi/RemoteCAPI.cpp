//===- RemoteCAPI.cpp - The C ABI over the engine -------------------------===//
//
// Handles, argument checks and failure reporting; everything else is the
// engine's. Each function is defined once under __catalyst__remote__ and
// aliased under __catalyst__executor__.
//
//===----------------------------------------------------------------------===//

#include "catalyst/remote/RemoteCAPI.h"

#include "catalyst/remote/Session.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace catalyst::remote;
using llvm::Error;

namespace {

thread_local std::string LastError;

void defaultFailureHandler(const char *Message) {
  std::fprintf(stderr, "catalyst-remote: %s\n", Message);
  std::abort();
}

std::atomic<void (*)(const char *)> FailureHandler{&defaultFailureHandler};

void fail(std::string Message) {
  LastError = std::move(Message);
  FailureHandler.load()(LastError.c_str());
}

bool failed(Error Err, const char *Call) {
  if (!Err)
    return false;
  fail(std::string(Call) + ": " + llvm::toString(std::move(Err)));
  return true;
}

// Live sessions by handle and by address, and async launches by token.
class Registry {
public:
  static Registry &get() {
    static Registry R;
    return R;
  }

  std::mutex M;
  std::map<int64_t, std::shared_ptr<Session>> Sessions;
  std::map<std::string, int64_t> ByAddress;
  // A token does not keep its session: one closed before the await makes
  // the await fail, saying so.
  std::map<int64_t, std::pair<std::weak_ptr<Session>, uint64_t>> Tokens;
  int64_t NextHandle = 1;
  int64_t NextToken = 1;
  OutputAllocator Outputs;

  std::shared_ptr<Session> find(int64_t Handle) {
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

std::shared_ptr<Session> sessionFor(int64_t Handle, const char *Call) {
  auto S = Registry::get().find(Handle);
  if (!S)
    fail(std::string(Call) + ": unknown session handle " + std::to_string(Handle));
  return S;
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

} // namespace

#define CATALYST_REMOTE_API extern "C" __attribute__((visibility("default")))
#define CATALYST_EXECUTOR_ALIAS(Name)                                                              \
  extern "C" __attribute__((visibility("default"), alias("__catalyst__remote__" #Name)))

CATALYST_REMOTE_API int64_t __catalyst__remote__open(const char *addr) {
  if (!addr || !*addr) {
    fail("open: empty executor address");
    return 0;
  }
  auto &R = Registry::get();
  OutputAllocator Outputs;
  {
    std::lock_guard<std::mutex> Lock(R.M);
    if (int64_t Live = R.liveHandle(addr))
      return Live;
    Outputs = R.Outputs;
  }
  SessionOptions Base;
  Base.Outputs = Outputs;
  auto Opts = optionsFromEnvironment(std::move(Base));
  if (!Opts) {
    failed(Opts.takeError(), "open");
    return 0;
  }
  // Connecting may take up to the handshake timeout; the process's other
  // sessions go on meanwhile, so the registry is not held.
  auto S = Session::open(addr, *Opts);
  if (!S) {
    failed(S.takeError(), "open");
    return 0;
  }
  std::shared_ptr<Session> Opened = std::move(*S);
  std::lock_guard<std::mutex> Lock(R.M);
  // Another thread opened the same address meanwhile: share its session
  // (ours closes once the lock is released).
  if (int64_t Live = R.liveHandle(addr))
    return Live;
  int64_t Handle = R.NextHandle++;
  R.Sessions[Handle] = std::move(Opened);
  R.ByAddress[addr] = Handle;
  return Handle;
}

CATALYST_REMOTE_API int64_t __catalyst__remote__send_binary(int64_t session, const char *path,
                                                            uint32_t format) {
  auto S = sessionFor(session, "send_binary");
  if (!S)
    return -1;
  if (!path || !*path) {
    fail("send_binary: empty path");
    return -1;
  }
  return failed(S->sendBinary(path, static_cast<BinaryFormat>(format)), "send_binary") ? -1 : 0;
}

namespace {

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

// Checks the arrays and builds the engine's view of the call; false (after
// reporting) when they are unusable.
bool toLaunchCall(const CLaunch &C, const char *Call, EngineLaunch &Out) {
  auto Prefix = [Call] { return std::string(Call) + ": "; };
  if (!C.Entry || !*C.Entry)
    return fail(Prefix() + "empty entry symbol"), false;
  if (C.NumInputs && (!C.InputDescs || !C.InputRanks || !C.InputElemSizes))
    return fail(Prefix() + std::to_string(C.NumInputs) + " inputs but a null input array"), false;
  if (C.NumOutputs && (!C.OutputDescs || !C.OutputRanks || !C.OutputElemSizes))
    return fail(Prefix() + std::to_string(C.NumOutputs) + " outputs but a null output array"),
           false;
  if (C.NumOutputs && (!C.IntoBuffers != !C.IntoBytes))
    return fail(Prefix() + "output buffers without their sizes, or sizes without buffers"), false;
  Out.Inputs = memrefArgs(C.NumInputs, C.InputDescs, C.InputRanks, C.InputElemSizes);
  Out.Outputs = memrefArgs(C.NumOutputs, C.OutputDescs, C.OutputRanks, C.OutputElemSizes);
  if (C.IntoBuffers)
    for (size_t I = 0; I < C.NumOutputs; ++I)
      Out.Into.emplace_back(static_cast<char *>(C.IntoBuffers[I]),
                            C.IntoBuffers[I] ? C.IntoBytes[I] : 0);
  Out.Call = {C.Entry, C.Object ? C.Object : "", Out.Inputs, Out.Outputs, Out.Into};
  return true;
}

int64_t queueLaunch(int64_t Session, const CLaunch &C, const char *Call) {
  auto S = sessionFor(Session, Call);
  EngineLaunch L;
  if (!S || !toLaunchCall(C, Call, L))
    return 0;
  uint64_t Ticket = S->launchAsync(L.Call);
  auto &R = Registry::get();
  std::lock_guard<std::mutex> Lock(R.M);
  int64_t Token = R.NextToken++;
  R.Tokens[Token] = {S, Ticket};
  return Token;
}

void runLaunch(int64_t Session, const CLaunch &C, const char *Call) {
  zeroOutputs(C.NumOutputs, C.OutputDescs, C.OutputRanks);
  auto S = sessionFor(Session, Call);
  EngineLaunch L;
  if (S && toLaunchCall(C, Call, L))
    failed(S->launch(L.Call), Call);
}

} // namespace

CATALYST_REMOTE_API void
__catalyst__remote__launch(int64_t session, const char *entry_symbol, const char *object,
                           size_t num_inputs, void *const *input_descs, const size_t *input_ranks,
                           const size_t *input_elem_sizes, size_t num_outputs,
                           void *const *output_descs, const size_t *output_ranks,
                           const size_t *output_elem_sizes) {
  CLaunch C{entry_symbol,     object,      num_inputs,   input_descs,  input_ranks,
            input_elem_sizes, num_outputs, output_descs, output_ranks, output_elem_sizes};
  runLaunch(session, C, "launch");
}

CATALYST_REMOTE_API void __catalyst__remote__launch_into(
    int64_t session, const char *entry_symbol, const char *object, size_t num_inputs,
    void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,
    size_t num_outputs, void *const *output_descs, const size_t *output_ranks,
    const size_t *output_elem_sizes, void *const *output_buffers, const size_t *output_bytes) {
  CLaunch C{entry_symbol,     object,      num_inputs,   input_descs,  input_ranks,
            input_elem_sizes, num_outputs, output_descs, output_ranks, output_elem_sizes,
            output_buffers,   output_bytes};
  runLaunch(session, C, "launch_into");
}

CATALYST_REMOTE_API int64_t __catalyst__remote__launch_async(int64_t session,
                                                             const char *entry_symbol,
                                                             const char *object) {
  CLaunch C{entry_symbol, object, 0, nullptr, nullptr, nullptr, 0, nullptr, nullptr, nullptr};
  return queueLaunch(session, C, "launch_async");
}

CATALYST_REMOTE_API int64_t __catalyst__remote__launch_async_memrefs(
    int64_t session, const char *entry_symbol, const char *object, size_t num_inputs,
    void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,
    size_t num_outputs, void *const *output_descs, const size_t *output_ranks,
    const size_t *output_elem_sizes) {
  zeroOutputs(num_outputs, output_descs, output_ranks);
  CLaunch C{entry_symbol,     object,      num_inputs,   input_descs,  input_ranks,
            input_elem_sizes, num_outputs, output_descs, output_ranks, output_elem_sizes};
  return queueLaunch(session, C, "launch_async_memrefs");
}

CATALYST_REMOTE_API void __catalyst__remote__await(int64_t token) {
  auto &R = Registry::get();
  std::pair<std::weak_ptr<Session>, uint64_t> Pending;
  {
    std::lock_guard<std::mutex> Lock(R.M);
    auto It = R.Tokens.find(token);
    if (It == R.Tokens.end())
      return fail("await: unknown launch token " + std::to_string(token));
    Pending = std::move(It->second);
    R.Tokens.erase(It);
  }
  std::shared_ptr<Session> S = Pending.first.lock();
  if (!S)
    return fail("await: the session of launch token " + std::to_string(token) +
                " was closed before the launch was awaited");
  failed(S->await(Pending.second), "await");
}

CATALYST_REMOTE_API int32_t __catalyst__remote__call_wrapper(int64_t session, const char *symbol,
                                                             const char *args_buf, size_t args_size,
                                                             void **out_buf, size_t *out_size) {
  auto S = sessionFor(session, "call_wrapper");
  if (!S)
    return 1;
  if (!symbol || !*symbol || !out_buf || !out_size || (args_size && !args_buf)) {
    fail("call_wrapper: needs a symbol, out_buf and out_size, and args_buf when args_size > 0");
    return 1;
  }
  auto Result = S->callWrapper(symbol, {args_buf, args_size});
  if (!Result)
    return failed(Result.takeError(), "call_wrapper"), 1;
  void *Buf = std::malloc(Result->empty() ? 1 : Result->size());
  if (!Buf) {
    fail("call_wrapper: cannot allocate the result buffer");
    return 1;
  }
  if (!Result->empty()) // an empty vector's data() may be null
    std::memcpy(Buf, Result->data(), Result->size());
  *out_buf = Buf;
  *out_size = Result->size();
  return 0;
}

CATALYST_REMOTE_API void __catalyst__remote__free_result(void *buf) {
  std::free(buf);
}

CATALYST_REMOTE_API int64_t __catalyst__remote__close(int64_t session) {
  auto &R = Registry::get();
  std::shared_ptr<Session> S;
  {
    std::lock_guard<std::mutex> Lock(R.M);
    auto It = R.Sessions.find(session);
    if (It == R.Sessions.end())
      return 0;
    S = std::move(It->second);
    R.Sessions.erase(It);
    auto A = R.ByAddress.find(S->address().str());
    if (A != R.ByAddress.end() && A->second == session)
      R.ByAddress.erase(A);
  }
  return failed(S->close(), "close") ? -1 : 0;
}

CATALYST_REMOTE_API int32_t __catalyst__remote__stats(int64_t session,
                                                      struct catalyst_remote_stats *out) {
  auto S = sessionFor(session, "stats");
  if (!S)
    return -1;
  if (!out) {
    fail("stats: null output");
    return -1;
  }
  SessionStats Stats = S->stats();
  out->launches = Stats.Launches;
  copyStats(Stats.Last, out->last);
  copyStats(Stats.Total, out->total);
  out->strategy = strategyName(S->strategy());
  out->transport = transportName(S->transport());
  return 0;
}

CATALYST_REMOTE_API const char *__catalyst__remote__last_error(void) {
  return LastError.c_str();
}

CATALYST_REMOTE_API void __catalyst__remote__set_failure_handler(void (*handler)(const char *)) {
  FailureHandler = handler ? handler : &defaultFailureHandler;
}

CATALYST_REMOTE_API void __catalyst__remote__set_output_allocator(void *(*alloc)(size_t),
                                                                  void (*release)(void *)) {
  auto &R = Registry::get();
  std::lock_guard<std::mutex> Lock(R.M);
  R.Outputs = {alloc, alloc ? release : nullptr};
}

CATALYST_EXECUTOR_ALIAS(open) int64_t __catalyst__executor__open(const char *);
CATALYST_EXECUTOR_ALIAS(send_binary)
int64_t __catalyst__executor__send_binary(int64_t, const char *, uint32_t);
CATALYST_EXECUTOR_ALIAS(launch)
void __catalyst__executor__launch(int64_t, const char *, const char *, size_t, void *const *,
                                  const size_t *, const size_t *, size_t, void *const *,
                                  const size_t *, const size_t *);
CATALYST_EXECUTOR_ALIAS(launch_into)
void __catalyst__executor__launch_into(int64_t, const char *, const char *, size_t, void *const *,
                                       const size_t *, const size_t *, size_t, void *const *,
                                       const size_t *, const size_t *, void *const *,
                                       const size_t *);
CATALYST_EXECUTOR_ALIAS(launch_async)
int64_t __catalyst__executor__launch_async(int64_t, const char *, const char *);
CATALYST_EXECUTOR_ALIAS(launch_async_memrefs)
int64_t __catalyst__executor__launch_async_memrefs(int64_t, const char *, const char *, size_t,
                                                   void *const *, const size_t *, const size_t *,
                                                   size_t, void *const *, const size_t *,
                                                   const size_t *);
CATALYST_EXECUTOR_ALIAS(await) void __catalyst__executor__await(int64_t);
CATALYST_EXECUTOR_ALIAS(call_wrapper)
int32_t __catalyst__executor__call_wrapper(int64_t, const char *, const char *, size_t, void **,
                                           size_t *);
CATALYST_EXECUTOR_ALIAS(free_result) void __catalyst__executor__free_result(void *);
CATALYST_EXECUTOR_ALIAS(close) int64_t __catalyst__executor__close(int64_t);
CATALYST_EXECUTOR_ALIAS(stats)
int32_t __catalyst__executor__stats(int64_t, struct catalyst_remote_stats *);
CATALYST_EXECUTOR_ALIAS(last_error) const char *__catalyst__executor__last_error(void);
CATALYST_EXECUTOR_ALIAS(set_failure_handler)
void __catalyst__executor__set_failure_handler(void (*)(const char *));
CATALYST_EXECUTOR_ALIAS(set_output_allocator)
void __catalyst__executor__set_output_allocator(void *(*)(size_t), void (*)(void *));
