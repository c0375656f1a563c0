//===- HostChallenge.h - The executor's side of the handshake ---*- C++ -*-===//
//
// The executor challenges each host to prove it knows the secret
// (Handshake.h) before it gives the host a process of its own: a peer that
// connects and leaves, stays silent or sends garbage then costs a socket
// and this object, never a fork. A listener keeps one per peer that has not
// authenticated yet and advances it whenever the peer's socket is readable,
// so one thread serves them all and none can block it.
//
//   HostChallenge C(Nonce, WireMode::Tls);     // a fresh nonce per peer
//   if (auto Err = C.start(Fd)) ...            // sends the challenge
//   on readable: switch (C.advance(Fd, Secret)) ...
//   on Proven: C.sendProof(Fd, Secret), or refuse the host (at capacity)
//
// Every frame has a fixed size, so the object holds all it will ever need;
// nothing is allocated for a peer that has proven nothing. Not thread-safe:
// one owner (the listener's thread) drives it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_HOSTCHALLENGE_H
#define CATALYST_REMOTE_WIRE_HOSTCHALLENGE_H

#include "Handshake.h"
#include "Secret.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>

namespace catalyst::remote::wire {

class HostChallenge {
public:
  enum class Outcome {
    Waiting,      // the response is not complete yet: call again when readable
    Proven,       // the host knows the secret: send the proof, or refuse it
    Left,         // the peer closed the connection or reset it
    Malformed,    // the peer sent something other than a response
    WrongProof,   // a response whose proof does not match the secret
    WireMismatch, // a host that proved itself wants other wire protection
  };

  // Wire: this executor's wire mode for this connection (Handshake.h).
  HostChallenge(const Nonce &Challenge, WireMode Wire) : Challenge(Challenge), Wire(Wire) {}

  // Sends the challenge on Fd, without blocking: a fresh connection's send
  // buffer always takes a frame this small.
  llvm::Error start(int Fd);

  // Reads what has arrived on Fd (non-blocking) and checks the response
  // once it is whole. Malformed, WrongProof and WireMismatch have told the
  // peer why (refuseConnection).
  Outcome advance(int Fd, llvm::StringRef Secret);

  // After Proven: sends the executor's proof; false when the peer is gone.
  // Over a plain wire it is corked (MSG_MORE), to leave with the EPC setup
  // message that follows: the host then wakes up once for both. Before
  // TLS nothing follows until the host speaks.
  bool sendProof(int Fd, llvm::StringRef Secret) const;

  // The key of the session's TLS stream, after Proven (TlsStream.h).
  llvm::Expected<Psk> sessionKey(llvm::StringRef Secret) const;
  WireMode wire() const { return Wire; }

private:
  Outcome check(int Fd, llvm::StringRef Secret);
  Nonce hostNonce() const;
  WireClaims claims() const;

  Nonce Challenge;
  WireMode Wire;
  char Response[ResponseFrameSize];
  size_t Got = 0;
};

// What an outcome says of the peer, for logs: "its proof does not match
// this executor's secret (wrong token?)".
const char *describe(HostChallenge::Outcome O);

} // namespace catalyst::remote::wire

#endif
