//===- HangupKind.h - What kind of failure a peer's hangup names -*- C++ -*-===//
//
// An executor says why it refuses a host, or ends a session, in the text of
// an EPC Hangup frame (Handshake.h, executor/CrashReporter.cpp, its
// listener). That text is for a person; a host also needs its kind
// (FailureKind) so that a program can act on it: a refused secret, a busy
// executor, a crashed kernel. The openings below are the part of the text a
// host reads the kind from; both ends spell them from here, so that one
// cannot change without the other.
//
//   if (hangupKind(Said, FailureKind::Other) == FailureKind::Authentication) ...
//
// Thread safety: constants and a pure function.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_HANGUPKIND_H
#define CATALYST_REMOTE_WIRE_HANGUPKIND_H

#include "catalyst/remote/Failure.h"

#include "llvm/ADT/StringRef.h"

namespace catalyst::remote::wire {

// A peer that did not prove it knows the secret, or whose secret the
// executor could not check ("authentication failed: ...", "authentication
// failed on the executor: ...").
inline constexpr llvm::StringLiteral AuthRefusal = "authentication failed";
// A peer of another user at a socket file: the kernel's check of who the
// peer is, the socket file's authentication.
inline constexpr llvm::StringLiteral OtherUserRefusal =
    "a socket file serves only the executor's own user: ";
// An executor serving all the sessions it may (--max-connections): trying
// later may work.
inline constexpr llvm::StringLiteral CapacityRefusal = "executor at capacity: ";
// A connection process's crash reporter, dying of a fatal signal in a
// kernel: the signal follows.
inline constexpr llvm::StringLiteral KernelCrashReport =
    "the kernel crashed the executor's connection process ";

// A connection process told to stop (SIGTERM, SIGHUP) ends its session
// saying so: the executor went away, which a program treats as a lost one.
inline constexpr llvm::StringLiteral StopNotice = "the executor is stopping";

// The kind of failure the peer's reason Said names (its raw text, before
// quotePeerText): Otherwise when it names none of the above, nor a busy
// executor (Handshake.h's BusyRefusal).
FailureKind hangupKind(llvm::StringRef Said, FailureKind Otherwise);

} // namespace catalyst::remote::wire

#endif
