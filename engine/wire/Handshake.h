//===- Handshake.h - Who is on the other end, before any EPC ----*- C++ -*-===//
//
// An executor runs whatever code its host sends, so before the first EPC
// message both ends may prove that they know a shared secret (Secret.h):
//
//   executor -> host  Challenge: version, executor nonce
//   host -> executor  Response:  host nonce, host proof
//   executor -> host  Proof:     executor proof
//
// then the executor's EPC setup message follows, as it would without
// authentication: one round trip more for the host. Frames use the EPC
// framing (a 32-byte header, then the body) with opcodes of their own, and
// every frame has a fixed size, so nothing is allocated for a peer that has
// not proven itself. A refusal (wrong secret, executor at capacity) is an
// EPC Hangup frame carrying the reason, which any EPC peer understands.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_HANDSHAKE_H
#define CATALYST_REMOTE_WIRE_HANDSHAKE_H

#include "Secret.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace catalyst::remote::wire {

enum class AuthOpcode : uint64_t { Challenge = 0x50, Response = 0x51, Proof = 0x52 };
inline constexpr uint64_t AuthVersion = 1;

// The largest EPC setup message a host waits for; real ones are a few KiB.
inline constexpr uint64_t MaxSetupMessage = 64 << 10;

using Deadline = std::chrono::steady_clock::time_point;

// The host's part, on a freshly connected socket. With a Secret, expects a
// challenge, answers it and checks the executor's proof; without one,
// expects the EPC setup message. Returns once the setup message has fully
// arrived (and is left unread for the EPC), so the EPC handshake after it
// cannot stall; fails with the reason when the executor refused the host.
// Setup, when given, receives a copy of the setup message (header included).
llvm::Error authenticateExecutor(int Fd, llvm::StringRef Secret, Deadline By,
                                 std::vector<char> *Setup = nullptr);

// The executor's part: challenges the host with Challenge, a fresh nonce for
// this connection, and checks its response; on success sends its own proof,
// on failure tells the host why and fails. (An executor draws the nonce
// before it forks the connection's process, where OpenSSL's generator is
// warm: a forked child's first draw reseeds it, 80 us here.)
llvm::Error authenticateHost(int Fd, llvm::StringRef Secret, const Nonce &Challenge, Deadline By);

// Tells a peer why it is turned away: a Hangup frame, sent without
// blocking. Best effort: the peer may be gone, and it is refused anyway.
void refuseConnection(int Fd, llvm::StringRef Reason);

} // namespace catalyst::remote::wire

#endif
