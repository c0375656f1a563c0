//===- HostChallenge.cpp - The executor's side of the handshake -----------===//

#include "HostChallenge.h"

#include "llvm/Support/Endian.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

using namespace llvm;

namespace catalyst::remote::wire {

Error HostChallenge::start(int Fd) {
  char Frame[ChallengeFrameSize];
  writeAuthHeader(Frame, AuthOpcode::Challenge, ChallengeFrameSize - AuthHeaderSize);
  support::endian::write64le(Frame + AuthHeaderSize, AuthVersion);
  std::memcpy(Frame + AuthHeaderSize + 8, Challenge.data(), NonceSize);
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
      refuseConnection(Fd, "authentication failed: this executor requires a secret; the host "
                           "did not answer its challenge");
      return Outcome::Malformed;
    }
  }
  return Got < sizeof(Response) ? Outcome::Waiting : check(Fd, Secret);
}

namespace {

// OpenSSL failing to compute an HMAC is this executor's trouble, not the
// peer's; the peer is refused all the same, and told why.
HostChallenge::Outcome cannotProve(int Fd, Error Err) {
  refuseConnection(Fd, "authentication failed on the executor: " + toString(std::move(Err)));
  return HostChallenge::Outcome::WrongProof;
}

} // namespace

HostChallenge::Outcome HostChallenge::check(int Fd, StringRef Secret) {
  Nonce FromHost;
  std::memcpy(FromHost.data(), Response + AuthHeaderSize, NonceSize);
  const auto *Theirs = reinterpret_cast<const uint8_t *>(Response + AuthHeaderSize + NonceSize);
  auto Expected = prove(Secret, Prover::Host, Challenge, FromHost);
  if (!Expected)
    return cannotProve(Fd, Expected.takeError());
  if (!sameMac(*Expected, ArrayRef<uint8_t>(Theirs, MacSize))) {
    refuseConnection(Fd, "authentication failed: the host's proof does not match this "
                         "executor's secret (wrong token?)");
    return Outcome::WrongProof;
  }
  // Only a host that proved itself gets the executor's proof computed.
  auto Mine = prove(Secret, Prover::Executor, Challenge, FromHost);
  if (!Mine)
    return cannotProve(Fd, Mine.takeError());
  char Frame[ProofFrameSize];
  writeAuthHeader(Frame, AuthOpcode::Proof, MacSize);
  std::memcpy(Frame + AuthHeaderSize, Mine->data(), MacSize);
  // MSG_MORE: the proof waits for the EPC setup message that follows and
  // leaves with it, so the host wakes up once for both.
  ssize_t N = ::send(Fd, Frame, sizeof(Frame), MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE);
  return N == ssize_t(sizeof(Frame)) ? Outcome::Proven : Outcome::Left;
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
  }
  return "?";
}

} // namespace catalyst::remote::wire
