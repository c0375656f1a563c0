//===- Failure.h - What kind of failure an Error is -------------*- C++ -*-===//
//
// Most of the library's errors are for a person to read. A program needs a
// little more from some of them: a binding raises a different exception for
// a refused secret than for a lost executor, a caller retries elsewhere only
// when the executor is gone. Such errors are a Failure: a message, as ever,
// and a FailureKind. Any other llvm::Error counts as FailureKind::Other.
//
// Usage:
//   return makeFailure(FailureKind::Timeout, "no reply within " + ...);
//   return withContext("launch", std::move(Err));   // keeps Err's kind
//   FailureReport R = reportFailure(std::move(Err)); // R.Kind, R.Message
//
// Thread safety: plain values; every function may run on any thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_FAILURE_H
#define CATALYST_REMOTE_FAILURE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace catalyst::remote {

// The numbers are part of the bindings' C ABI (RemoteBindings.h): append,
// never renumber.
enum class FailureKind : int32_t {
  // Anything else: a failed link, a missing symbol, an executor's refusal.
  Other = 1,
  // The caller's arguments: a bad address, descriptor, option or file.
  BadArgument = 2,
  // A secret was missing, wrong, or not proved by the other end.
  Authentication = 3,
  // No executor answered at the address (refused, unreachable, unknown).
  Unreachable = 4,
  // The executor, or its connection process, went away mid-session, or
  // stopped answering for the liveness timeout; also every call on a
  // session whose connection ended so.
  ExecutorLost = 5,
  // A kernel killed its connection process (a signal the executor named).
  KernelCrashed = 6,
  // A deadline passed: the handshake, a launch (LaunchTimeout), a pool's
  // members.
  Timeout = 7,
  // The session or pool was closed before or during the call.
  Closed = 8,
  // The executor turned the session away for now (too many peers
  // authenticating, or at --max-connections); trying later may work.
  Busy = 9,
};

// "other", "bad argument", "authentication", ...
const char *failureKindName(FailureKind K);

class Failure : public llvm::ErrorInfo<Failure> {
public:
  static char ID;
  Failure(FailureKind Kind, std::string Message) : Kind(Kind), Message(std::move(Message)) {}
  FailureKind kind() const { return Kind; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  FailureKind Kind;
  std::string Message;
};

llvm::Error makeFailure(FailureKind Kind, const llvm::Twine &Message);

// Err, its message prefixed with "Context: ", its kind kept (that of its
// first Failure, when Err joins several). Success stays success.
llvm::Error withContext(const llvm::Twine &Context, llvm::Error Err);

struct FailureReport {
  FailureKind Kind = FailureKind::Other;
  std::string Message; // as llvm::toString gives it
};

// Consumes Err, which must be a failure: its first Failure's kind (Other
// when it holds none) and its whole message.
FailureReport reportFailure(llvm::Error Err);

} // namespace catalyst::remote

#endif
