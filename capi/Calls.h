//===- Calls.h - The work of every C ABI call -------------------*- C++ -*-===//
//
// What each exported function does, returning an Error instead of
// reporting it: RemoteCAPI.cpp reports it the way of its prefix (a failure
// handler, or a throw), Bindings.cpp returns its kind as a status. Handles
// are the same for both: one process-wide registry of live targets
// (sessions and pools) and of async launch tokens.
//
// Every error is a Failure (catalyst/remote/Failure.h) whose message starts
// with the call's name ("launch: ...").
//
// Thread safety: every function from any thread; the registry locks its
// own, and a target serializes what it must (Session.h, Pool.h).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CAPI_CALLS_H
#define CATALYST_REMOTE_CAPI_CALLS_H

#include "catalyst/remote/Pool.h"
#include "catalyst/remote/RemoteCAPI.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace catalyst::remote::capi {

// This thread's last failure message, "" before the first.
const char *lastError();
void setLastError(std::string Message);

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
  const int64_t *InputResidents = nullptr; // launch_residents only
  int64_t *KeptOutputs = nullptr;
};

// A handle > 0 for a live target at Addr, shared by every caller of the
// same address, with options from the environment.
llvm::Expected<int64_t> openShared(const char *Addr);
// A handle > 0 for a target of its own, with Opts (Opts.Member for a
// session).
llvm::Expected<int64_t> openOwn(const char *Addr, const PoolOptions &Opts);

llvm::Error sendBinary(int64_t Handle, const char *Path, uint32_t Format);
// Leaves the output descriptors zeroed when it fails.
llvm::Error runLaunch(int64_t Handle, const CLaunch &C, const char *Call);
llvm::Expected<int64_t> queueLaunch(int64_t Handle, const CLaunch &C, const char *Call);
llvm::Error awaitLaunch(int64_t Token);
// Residents by handles of their own (> 0), each of one target's.
llvm::Expected<int64_t> uploadTensor(int64_t Handle, void *Desc, size_t Rank, size_t ElemSize);
// Leaves the descriptor zeroed when it fails; a null Buffer: a fresh one.
llvm::Error fetchResident(int64_t Resident, void *Desc, size_t Rank, size_t ElemSize, void *Buffer,
                          size_t Bytes);
llvm::Error releaseResident(int64_t Resident);
llvm::Error callWrapper(int64_t Handle, const char *Symbol, const char *Args, size_t ArgsSize,
                        void **OutBuf, size_t *OutSize);
llvm::Error closeTarget(int64_t Handle);
llvm::Error readStats(int64_t Handle, catalyst_remote_stats *Out);
// The target as a JSON object (StatsJson.h).
llvm::Expected<std::string> describeTarget(int64_t Handle);
// Traces the target to Path from now on (Target::startTrace); stops it.
llvm::Error startTrace(int64_t Handle, const char *Path);
llvm::Error stopTrace(int64_t Handle);
// For targets opened afterwards by openShared; null Alloc: the default.
void setOutputAllocator(void *(*Alloc)(size_t), void (*Release)(void *));

} // namespace catalyst::remote::capi

#endif
