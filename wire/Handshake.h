//===- Handshake.h - Who is on the other end, before any EPC ----*- C++ -*-===//
//
// An executor runs whatever code its host sends, so before the first EPC
// message both ends may prove that they know a shared secret (Secret.h):
//
//   executor -> host  Challenge: version, executor's wire mode, executor nonce
//   host -> executor  Response:  host nonce, host's wire mode, host proof
//   executor -> host  Proof:     executor proof
//
// Both proofs cover both wire modes, so a relay can change neither. When
// both say TLS, a TLS 1.3 handshake follows, keyed by the secret and both
// nonces (TlsStream.h), and every byte after it travels in TLS records;
// when both say plain, the bytes stay as they are. Then the executor's EPC
// setup message follows, as it would without authentication: one round
// trip more for the host (two with TLS). Frames use the EPC
// framing (a 32-byte header, then the body) with opcodes of their own, and
// every frame has a fixed size, so nothing is allocated for a peer that has
// not proven itself. A refusal (wrong secret, executor at capacity) is an
// EPC Hangup frame carrying the reason, which any EPC peer understands.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_HANDSHAKE_H
#define CATALYST_REMOTE_WIRE_HANDSHAKE_H

#include "Secret.h"
#include "TlsStream.h"
#include "catalyst/remote/Failure.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace catalyst::remote::wire {

enum class AuthOpcode : uint64_t { Challenge = 0x50, Response = 0x51, Proof = 0x52 };
inline constexpr uint64_t AuthVersion = 2;

// What carries a session's bytes once both ends are authenticated. Over a
// socket file or the local socket a session is plain: no network lies
// between. On a socket file both ends check the peer's user
// (SO_PEERCRED); on the local socket the host checks that the listener
// that made the offer serves it, and the executor checks no peer.
enum class WireMode : uint64_t { Plain = 0, Tls = 1 };
const char *wireName(WireMode M); // "plain", "tls"

// The largest EPC setup message a host waits for; real ones are a few KiB.
inline constexpr uint64_t MaxSetupMessage = 64 << 10;

using Deadline = std::chrono::steady_clock::time_point;

// What the host brings to the handshake.
struct HostAuth {
  llvm::StringRef Secret; // empty: none
  // What this host wants: TLS needs a secret. A mismatch with the
  // executor's fails the handshake, naming both and Setting: how the
  // host's was chosen ("CATALYST_REMOTE_WIRE=plain"). None: what the
  // executor says, which both proofs cover, so no relay can change it.
  std::optional<WireMode> Wire;
  std::string Setting;
};

// The host's part, on a freshly connected socket. With a Secret, expects a
// challenge, answers it and checks the executor's proof, then runs TLS
// when both ends said so; without one, expects the EPC setup message.
// Returns once the setup message has fully arrived (and is left unread
// for the EPC), so the EPC handshake after it cannot stall, with the TLS
// stream the session's bytes then travel in (null when plain); fails with
// the reason when the executor refused the host. Setup, when given,
// receives a copy of the setup message (header included).
llvm::Expected<std::unique_ptr<TlsStream>>
authenticateExecutor(int Fd, const HostAuth &Auth, Deadline By, std::vector<char> *Setup = nullptr);

// The executor's part is HostChallenge.h: a listener drives it for many
// peers at once. These are its frames' sizes, header included.
inline constexpr size_t AuthHeaderSize = 32;
inline constexpr size_t ChallengeFrameSize = AuthHeaderSize + 16 + NonceSize;
inline constexpr size_t ResponseFrameSize = AuthHeaderSize + NonceSize + 8 + MacSize;
inline constexpr size_t ProofFrameSize = AuthHeaderSize + MacSize;

// Writes the header of a frame of kind OpC with a body of BodySize bytes to
// Frame (AuthHeaderSize bytes).
void writeAuthHeader(char *Frame, AuthOpcode OpC, size_t BodySize);

// How a refusal from an executor too busy to take one more peer before it
// authenticates begins (executor/Startups.h). Hosts try again on it, until
// their handshake deadline: a host that authenticates quickly gets in while
// slow peers pile up. Anyone may send it; it costs the host only retries.
inline constexpr llvm::StringLiteral BusyRefusal = "executor busy: ";

// The error authenticateExecutor returns for such a refusal: a Failure of
// kind Busy, which a host that is to retry tells from other Busy ones (an
// executor at capacity, which stays so until a session ends).
class ExecutorBusy : public llvm::ErrorInfo<ExecutorBusy, Failure> {
public:
  static char ID;
  explicit ExecutorBusy(std::string Message) : ErrorInfo(FailureKind::Busy, std::move(Message)) {}
};

// Tells a peer why it is turned away: a Hangup frame, sent without
// blocking. Best effort: the peer may be gone, and it is refused anyway.
void refuseConnection(int Fd, llvm::StringRef Reason);

} // namespace catalyst::remote::wire

#endif
