//===- HostChallenge.cpp - The executor's side of the handshake -----------===//

#include "HostChallenge.h"

#include "HangupKind.h"

#include "llvm/Support/Endian.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// Refuses the peer for Why, in words a host reads as an authentication
// failure (HangupKind.h).
void refuseUnproven(int Fd, const Twine &Why) {
  refuseConnection(Fd, (AuthRefusal + Why).str());
}

} // namespace

Error HostChallenge::start(int Fd) {
  char Frame[ChallengeFrameSize];
  writeAuthHeader(Frame, AuthOpcode::Challenge, ChallengeFrameSize - AuthHeaderSize);
  support::endian::write64le(Frame + AuthHeaderSize, AuthVersion);
  support::endian::write64le(Frame + AuthHeaderSize + 8, uint64_t(Wire));
  std::memcpy(Frame + AuthHeaderSize + 16, Challenge.data(), NonceSize);
  ssize_t N = ::send(Fd, Frame, sizeof(Frame), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (N == ssize_t(sizeof(Frame)))
    return Error::success();
  return createStringError(std::error_code(N < 0 ? errno : EIO, std::generic_category()),
                           "sending the challenge: %s",
                           N < 0 ? std::strerror(errno) : "short write");
}

HostChallenge::Outcome HostChallenge::advance(int Fd, StringRef Secret) {
  while (Got < sizeof(Response)) {
    ssize_t N = ::recv(Fd, Response + Got, sizeof(Response) - Got, MSG_DONTWAIT);
    if (N > 0) {
      Got += size_t(N);
      continue;
    }
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    return Outcome::Left; // end of stream, a reset, or a socket error
  }
  // The header alone tells a stranger: no need to wait for the rest.
  if (Got >= AuthHeaderSize) {
    uint64_t Size = support::endian::read64le(Response);
    uint64_t OpC = support::endian::read64le(Response + 8);
    if (OpC != uint64_t(AuthOpcode::Response) || Size != ResponseFrameSize) {
      refuseUnproven(Fd, ": this executor requires a secret; the host did not answer its "
                         "challenge");
      return Outcome::Malformed;
    }
  }
  return Got < sizeof(Response) ? Outcome::Waiting : check(Fd, Secret);
}

namespace {

// OpenSSL failing to compute an HMAC is this executor's trouble, not the
// peer's; the peer is refused all the same, and told why.
HostChallenge::Outcome cannotProve(int Fd, Error Err) {
  refuseUnproven(Fd, " on the executor: " + toString(std::move(Err)));
  return HostChallenge::Outcome::WrongProof;
}

constexpr size_t HostWireAt = AuthHeaderSize + NonceSize;
constexpr size_t HostMacAt = HostWireAt + 8;

} // namespace

Nonce HostChallenge::hostNonce() const {
  Nonce FromHost;
  std::memcpy(FromHost.data(), Response + AuthHeaderSize, NonceSize);
  return FromHost;
}

WireClaims HostChallenge::claims() const {
  return {uint64_t(Wire), support::endian::read64le(Response + HostWireAt)};
}

HostChallenge::Outcome HostChallenge::check(int Fd, StringRef Secret) {
  const auto *Theirs = reinterpret_cast<const uint8_t *>(Response + HostMacAt);
  auto Expected = prove(Secret, Prover::Host, claims(), Challenge, hostNonce());
  if (!Expected)
    return cannotProve(Fd, Expected.takeError());
  if (!sameMac(*Expected, ArrayRef<uint8_t>(Theirs, MacSize))) {
    refuseUnproven(Fd, ": the host's proof does not match this executor's secret (wrong token?)");
    return Outcome::WrongProof;
  }
  uint64_t HostWire = claims().Host;
  if (HostWire != uint64_t(Wire)) {
    const char *Theirs = HostWire == uint64_t(WireMode::Tls)     ? "tls"
                         : HostWire == uint64_t(WireMode::Plain) ? "plain"
                                                                 : "unknown";
    refuseConnection(Fd, std::string("wire protection differs: this executor's is ") +
                             wireName(Wire) + " (--wire), the host's is " + Theirs +
                             " (CATALYST_REMOTE_WIRE or SessionOptions::Wire)");
    return Outcome::WireMismatch;
  }
  return Outcome::Proven;
}

bool HostChallenge::sendProof(int Fd, StringRef Secret) const {
  // Only a host that proved itself gets the executor's proof computed.
  auto Mine = prove(Secret, Prover::Executor, claims(), Challenge, hostNonce());
  if (!Mine) {
    cannotProve(Fd, Mine.takeError());
    return false;
  }
  char Frame[ProofFrameSize];
  writeAuthHeader(Frame, AuthOpcode::Proof, MacSize);
  std::memcpy(Frame + AuthHeaderSize, Mine->data(), MacSize);
  int More = Wire == WireMode::Plain ? MSG_MORE : 0;
  ssize_t N = ::send(Fd, Frame, sizeof(Frame), MSG_DONTWAIT | MSG_NOSIGNAL | More);
  return N == ssize_t(sizeof(Frame));
}

Expected<Psk> HostChallenge::sessionKey(StringRef Secret) const {
  return derivePsk(Secret, Challenge, hostNonce());
}

const char *describe(HostChallenge::Outcome O) {
  switch (O) {
  case HostChallenge::Outcome::Waiting:
    return "it has not answered the challenge yet";
  case HostChallenge::Outcome::Proven:
    return "it proved it knows the secret";
  case HostChallenge::Outcome::Left:
    return "it closed the connection before authenticating";
  case HostChallenge::Outcome::Malformed:
    return "it did not answer the challenge";
  case HostChallenge::Outcome::WrongProof:
    return "its proof does not match this executor's secret (wrong token?)";
  case HostChallenge::Outcome::WireMismatch:
    return "it wants other wire protection than this executor's (--wire)";
  }
  return "?";
}

} // namespace catalyst::remote::wire
