//===- Handshake.cpp - Who is on the other end, before any EPC ------------===//

#include "Handshake.h"

#include "HangupKind.h"
#include "PeerText.h"
#include "Secret.h"
#include "SocketTimeouts.h"
#include "SocketTransport.h"
#include "SpsCheck.h"

#include "llvm/ExecutionEngine/Orc/Shared/SimpleRemoteEPCUtils.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <openssl/crypto.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

char ExecutorBusy::ID = 0;

namespace {

constexpr size_t HeaderSize = SocketTransport::HeaderSize;
constexpr size_t ChallengeBody = 16 + NonceSize;
constexpr size_t ResponseBody = NonceSize + 8 + MacSize;
constexpr size_t ProofBody = MacSize;
// A refusal's reason is a sentence; more is not read.
constexpr uint64_t MaxHangupBody = 4096;

Error failed(const Twine &What) {
  return makeFailure(FailureKind::Authentication, AuthRefusal + ": " + What);
}

Error protocolError(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "handshake failed: " + What);
}

int msLeft(Deadline By) {
  auto Left = std::chrono::ceil<std::chrono::milliseconds>(By - std::chrono::steady_clock::now());
  return int(std::max<int64_t>(0, std::min<int64_t>(Left.count(), INT32_MAX)));
}

// Waits until Fd is readable; false when the deadline passed first.
Expected<bool> readable(int Fd, Deadline By) {
  for (;;) {
    pollfd P{Fd, POLLIN, 0};
    int R = ::poll(&P, 1, msLeft(By));
    if (R > 0)
      return true;
    if (R == 0)
      return false;
    if (errno != EINTR)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "waiting for the peer: %s", std::strerror(errno));
  }
}

Error timedOut() {
  return makeFailure(FailureKind::Timeout,
                     "handshake failed: the peer did not complete the handshake in time");
}

// Reads exactly Size bytes by the deadline.
Error readFully(int Fd, char *Dst, size_t Size, Deadline By) {
  size_t Done = 0;
  while (Done < Size) {
    auto Ready = readable(Fd, By);
    if (!Ready)
      return Ready.takeError();
    if (!*Ready)
      return timedOut();
    ssize_t N = ::recv(Fd, Dst + Done, Size - Done, MSG_DONTWAIT);
    if (N == 0 || (N < 0 && errno == ECONNRESET))
      return protocolError("the peer closed the connection");
    if (N < 0 && errno != EINTR && errno != EAGAIN)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "handshake failed: reading from the peer: %s", std::strerror(errno));
    Done += N > 0 ? size_t(N) : 0;
  }
  return Error::success();
}

// A peek that returned part of what it waited for returns again at once
// when the peer has closed: nothing more will come.
bool peerClosed(int Fd) {
  pollfd P{Fd, POLLRDHUP, 0};
  return ::poll(&P, 1, 0) > 0 && (P.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

// Waits until Size bytes are buffered on Fd, without consuming them.
Error peekFully(int Fd, char *Dst, size_t Size, Deadline By) {
  for (;;) {
    int Ms = msLeft(By);
    if (Ms == 0)
      return timedOut();
    setReadTimeout(Fd, std::chrono::milliseconds(Ms));
    ssize_t N = ::recv(Fd, Dst, Size, MSG_PEEK | MSG_WAITALL);
    clearReadTimeout(Fd);
    if (N == ssize_t(Size))
      return Error::success();
    if (N == 0 || (N > 0 && peerClosed(Fd)))
      return protocolError("the peer closed the connection");
    if (N < 0 && errno != EINTR && errno != EAGAIN)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "handshake failed: reading from the peer: %s", std::strerror(errno));
  }
}

Error sendFrame(int Fd, AuthOpcode OpC, ArrayRef<char> Body) {
  char Frame[ResponseFrameSize];
  assert(Body.size() <= ResponseBody && "the host sends its response only");
  writeAuthHeader(Frame, OpC, Body.size());
  std::memcpy(Frame + HeaderSize, Body.data(), Body.size());
  size_t Size = HeaderSize + Body.size();
  // A handshake frame is far below any socket buffer: one send takes it all.
  ssize_t N = ::send(Fd, Frame, Size, MSG_NOSIGNAL);
  if (N == ssize_t(Size))
    return Error::success();
  return createStringError(std::error_code(N < 0 ? errno : EIO, std::generic_category()),
                           "handshake failed: sending to the peer: %s",
                           N < 0 ? std::strerror(errno) : "short write");
}

// Reads the rest of a Hangup frame whose header was consumed and returns
// the peer's reason as an error.
Error readRefusal(int Fd, uint64_t Size, Deadline By) {
  if (Size < HeaderSize || Size - HeaderSize > MaxHangupBody)
    return protocolError("the peer hung up with a malformed message");
  char Body[MaxHangupBody];
  if (auto Err = readFully(Fd, Body, Size - HeaderSize, By))
    return Err;
  shared::detail::SPSSerializableError Info;
  shared::SPSInputBuffer IB(Body, Size - HeaderSize);
  if (!shared::SPSArgList<shared::SPSError>::deserialize(IB, Info) || !Info.HasError)
    return protocolError("the executor hung up without saying why");
  // The executor has not proved itself: its words are quoted as its own,
  // cleaned of what could steer a terminal.
  std::string Said = "the executor refused the connection, saying: " + quotePeerText(Info.ErrMsg);
  FailureKind Kind = hangupKind(Info.ErrMsg, FailureKind::Other);
  if (Kind == FailureKind::Busy && StringRef(Info.ErrMsg).starts_with(BusyRefusal))
    return make_error<ExecutorBusy>(Said);
  return makeFailure(Kind, Said);
}

Error expectFrame(const FrameHeader &H, AuthOpcode OpC, size_t Body, const char *What) {
  if (H.OpC == uint64_t(OpC) && H.Size == HeaderSize + Body)
    return Error::success();
  return protocolError(formatv("expected {0} ({1} bytes), got a message with opcode {2:x} of "
                               "{3} bytes",
                               What, HeaderSize + Body, H.OpC, H.Size)
                           .str());
}

// What the host learned from the challenge and said in its response.
struct Agreed {
  Nonce FromExecutor, FromHost;
  WireMode Wire = WireMode::Plain;
};

Error wireMismatch(WireMode Executor, const HostAuth &A) {
  return createStringError(
      inconvertibleErrorCode(),
      "the executor and this host want different wire protection: the executor's is %s "
      "(catalyst-remote-executor --wire %s; TLS is its default over TCP with a token), this "
      "host's is %s (%s); give both the same setting",
      wireName(Executor), wireName(Executor), wireName(*A.Wire), A.Setting.c_str());
}

// The host's answer to a challenge whose header (H) was consumed.
Expected<Agreed> answerChallenge(int Fd, const FrameHeader &H, const HostAuth &A, Deadline By) {
  char Body[ChallengeBody];
  // A challenge of another version may have another size: its version
  // comes first, and says so better than its size would.
  if (H.Size < HeaderSize + 8 || H.Size > HeaderSize + ChallengeBody)
    if (auto Err = expectFrame(H, AuthOpcode::Challenge, ChallengeBody, "a challenge"))
      return Err;
  if (auto Err = readFully(Fd, Body, H.Size - HeaderSize, By))
    return Err;
  uint64_t Version = support::endian::read64le(Body);
  if (Version != AuthVersion)
    return protocolError(formatv("the executor speaks authentication version {0}, this host {1}: "
                                 "use the same release of catalyst-remote on both ends",
                                 Version, AuthVersion)
                             .str());
  if (auto Err = expectFrame(H, AuthOpcode::Challenge, ChallengeBody, "a challenge"))
    return Err;
  uint64_t ExecutorWire = support::endian::read64le(Body + 8);
  if (ExecutorWire > uint64_t(WireMode::Tls))
    return protocolError(
        formatv("the executor named an unknown wire mode {0}", ExecutorWire).str());
  Agreed Out;
  std::memcpy(Out.FromExecutor.data(), Body + 16, NonceSize);
  if (auto Err = drawNonce(Out.FromHost))
    return Err;
  uint64_t HostWire = A.Wire ? uint64_t(*A.Wire) : ExecutorWire;
  WireClaims Claims{ExecutorWire, HostWire};
  auto Mine = prove(A.Secret, Prover::Host, Claims, Out.FromExecutor, Out.FromHost);
  if (!Mine)
    return Mine.takeError();
  char Response[ResponseBody];
  std::memcpy(Response, Out.FromHost.data(), NonceSize);
  support::endian::write64le(Response + NonceSize, HostWire);
  std::memcpy(Response + NonceSize + 8, Mine->data(), MacSize);
  // Answered even on a mismatch, so that the executor hears it too and
  // says so in its log; then this host leaves.
  if (auto Err = sendFrame(Fd, AuthOpcode::Response, Response))
    return Err;
  if (ExecutorWire != HostWire)
    return wireMismatch(WireMode(ExecutorWire), A);

  char Next[HeaderSize];
  if (auto Err = readFully(Fd, Next, HeaderSize, By))
    return Err;
  FrameHeader Proof = decodeHeader(Next);
  if (Proof.OpC == uint64_t(SimpleRemoteEPCOpcode::Hangup))
    return readRefusal(Fd, Proof.Size, By);
  if (auto Err = expectFrame(Proof, AuthOpcode::Proof, ProofBody, "the executor's proof"))
    return Err;
  char Theirs[ProofBody];
  if (auto Err = readFully(Fd, Theirs, sizeof(Theirs), By))
    return Err;
  auto Expected = prove(A.Secret, Prover::Executor, Claims, Out.FromExecutor, Out.FromHost);
  if (!Expected)
    return Expected.takeError();
  if (!sameMac(*Expected, ArrayRef<uint8_t>(reinterpret_cast<uint8_t *>(Theirs), MacSize)))
    return failed("the executor's proof does not match this host's secret: it does not know it");
  Out.Wire = WireMode(HostWire);
  return Out;
}

// Waits until Size bytes have arrived through Tls, without consuming them.
Error peekThrough(TlsStream &Tls, char *Dst, size_t Size, Deadline By) {
  for (;;) {
    int Ms = msLeft(By);
    if (Ms == 0)
      return timedOut();
    Tls.setReadTimeout(std::chrono::milliseconds(Ms));
    ssize_t N = Tls.peek(Dst, Size, true);
    if (N == ssize_t(Size))
      return Error::success();
    if (N == 0)
      return protocolError("the peer closed the connection");
    if (N < 0 && Tls.failure() != TlsFailure::None)
      return protocolError("TLS failed: " + Tls.failureText());
    if (N < 0 && errno != EINTR && errno != EAGAIN)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "handshake failed: reading from the peer: %s", std::strerror(errno));
    // Part of it: wait for a byte more (a peek shows what has come).
    if (N > 0 && !Tls.waitReadable(Ms))
      return timedOut();
  }
}

// Waits for the whole EPC setup message, which the EPC then reads, and
// copies it to Copy when given; through Tls when the session has it.
Error awaitSetup(int Fd, TlsStream *Tls, Deadline By, std::vector<char> *Copy) {
  auto Peek = [&](char *Dst, size_t Size) {
    return Tls ? peekThrough(*Tls, Dst, Size, By) : peekFully(Fd, Dst, Size, By);
  };
  char H[HeaderSize];
  if (auto Err = Peek(H, HeaderSize))
    return Err;
  FrameHeader Setup = decodeHeader(H);
  if (Setup.OpC == uint64_t(SimpleRemoteEPCOpcode::Hangup) && !Tls) {
    if (auto Err = readFully(Fd, H, HeaderSize, By))
      return Err;
    return readRefusal(Fd, Setup.Size, By);
  }
  if (Setup.OpC != uint64_t(SimpleRemoteEPCOpcode::Setup) || Setup.Size < HeaderSize ||
      Setup.Size > MaxSetupMessage)
    return protocolError(formatv("the peer's first message (opcode {0:x}, {1} bytes) is not an "
                                 "executor's setup message",
                                 Setup.OpC, Setup.Size)
                             .str());
  std::vector<char> Whole(Setup.Size);
  if (auto Err = Peek(Whole.data(), Whole.size()))
    return Err;
  // ORC decodes it next, trusting its counts (see SpsCheck.h).
  using Info = shared::SPSArgList<shared::SPSSimpleRemoteEPCExecutorInfo>;
  if (!spsWellFormed<Info>(Whole.data() + HeaderSize, Whole.size() - HeaderSize))
    return protocolError("the executor's setup message is malformed");
  if (Copy)
    *Copy = std::move(Whole);
  return Error::success();
}

// The session's TLS stream, keyed by the secret and both nonces.
Expected<std::unique_ptr<TlsStream>> startTls(int Fd, StringRef Secret, const Agreed &A,
                                              Deadline By) {
  auto Key = derivePsk(Secret, A.FromExecutor, A.FromHost);
  if (!Key)
    return Key.takeError();
  auto Tls = TlsStream::handshake(Fd, TlsRole::Client, *Key, By);
  ::OPENSSL_cleanse(Key->data(), Key->size());
  return Tls;
}

} // namespace

const char *wireName(WireMode M) {
  return M == WireMode::Tls ? "tls" : "plain";
}

Expected<std::unique_ptr<TlsStream>> authenticateExecutor(int Fd, const HostAuth &Auth, Deadline By,
                                                          std::vector<char> *Setup) {
  char H[HeaderSize];
  if (auto Err = peekFully(Fd, H, HeaderSize, By))
    return Err;
  FrameHeader First = decodeHeader(H);
  bool Challenged = First.OpC == uint64_t(AuthOpcode::Challenge);
  StringRef Secret = Auth.Secret;
  if (Challenged && Secret.empty())
    return failed("the executor requires a secret, and this host has none; give it the "
                  "executor's token file with CATALYST_REMOTE_TOKEN_FILE=PATH (or the secret "
                  "in CATALYST_REMOTE_TOKEN, or SessionOptions::Secret)");
  if (!Challenged && !Secret.empty() && First.OpC == uint64_t(SimpleRemoteEPCOpcode::Setup))
    return failed("the executor did not ask for the secret, so it cannot prove it knows it (an "
                  "executor started without --token-file); this host has a secret and "
                  "refuses it");
  std::unique_ptr<TlsStream> Tls;
  if (Challenged) {
    if (auto Err = readFully(Fd, H, HeaderSize, By))
      return Err;
    auto A = answerChallenge(Fd, First, Auth, By);
    if (!A)
      return A.takeError();
    if (A->Wire == WireMode::Tls) {
      auto T = startTls(Fd, Secret, *A, By);
      if (!T)
        return T.takeError();
      Tls = std::move(*T);
    }
  }
  if (auto Err = awaitSetup(Fd, Tls.get(), By, Setup))
    return Err;
  return Tls;
}

void writeAuthHeader(char *Frame, AuthOpcode OpC, size_t BodySize) {
  support::endian::write64le(Frame, AuthHeaderSize + BodySize);
  support::endian::write64le(Frame + 8, uint64_t(OpC));
  support::endian::write64le(Frame + 16, 0);
  support::endian::write64le(Frame + 24, 0);
}

void refuseConnection(int Fd, StringRef Reason) {
  std::string Frame = encodeHangupFrame(Reason);
  // Best effort by design: the connection is being refused whatever
  // happens, and a peer that cannot take one small frame learns nothing.
  [[maybe_unused]] ssize_t N = ::send(Fd, Frame.data(), Frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

} // namespace catalyst::remote::wire
