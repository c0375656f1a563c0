//===- AuthTest.cpp - Hosts and executors prove they share a secret -------===//
//
// An executor started with --token-file serves only hosts that prove they
// know its secret, and proves it knows it too. A wrong, missing or replayed
// proof ends the connection before anything of a session exists on either
// side; so does an executor that cannot prove itself. Some tests speak the
// handshake themselves, as an attacker would, or play the executor.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "FakeExecutor.h"
#include "Pace.h"
#include "Procfs.h"
#include "Text.h"
#include "TokenFile.h"
#include "session/Connect.h"
#include "wire/Handshake.h"
#include "wire/Secret.h"

#include "llvm/Support/Endian.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

ExecutorOptions withToken(const TokenFile &T, std::vector<std::string> More = {}) {
  ExecutorOptions O;
  O.Args = {"--token-file", T.path()};
  O.Args.insert(O.Args.end(), More.begin(), More.end());
  return O;
}

// Tries to open a session; returns the error's kind and text (Other and ""
// when it opened) and how long it took.
FailureReport openError(const std::string &Address, const SessionOptions &O,
                        std::chrono::milliseconds &Took) {
  auto Start = Clock::now();
  auto S = Session::open(Address, forThisRun(O));
  Took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - Start);
  return S ? FailureReport{} : reportFailure(S.takeError());
}

// A frame of the handshake as it travels: header, then body.
std::vector<char> frame(uint64_t OpC, const std::vector<char> &Body) {
  std::vector<char> F(32 + Body.size());
  llvm::support::endian::write64le(F.data(), F.size());
  llvm::support::endian::write64le(F.data() + 8, OpC);
  std::copy(Body.begin(), Body.end(), F.begin() + 32);
  return F;
}

bool readAll(int Fd, char *Dst, size_t Size) {
  size_t Done = 0;
  while (Done < Size) {
    pollfd P{Fd, POLLIN, 0};
    if (::poll(&P, 1, 5000) <= 0)
      return false;
    ssize_t N = ::read(Fd, Dst + Done, Size - Done);
    if (N <= 0)
      return false;
    Done += size_t(N);
  }
  return true;
}

// Reads one frame: its opcode and body.
bool readFrame(int Fd, uint64_t &OpC, std::vector<char> &Body) {
  char H[32];
  if (!readAll(Fd, H, sizeof(H)))
    return false;
  uint64_t Size = llvm::support::endian::read64le(H);
  OpC = llvm::support::endian::read64le(H + 8);
  if (Size < 32 || Size > 65536)
    return false;
  Body.resize(Size - 32);
  return readAll(Fd, Body.data(), Body.size());
}

bool sendAll(int Fd, const std::vector<char> &Bytes) {
  return ::send(Fd, Bytes.data(), Bytes.size(), MSG_NOSIGNAL) == ssize_t(Bytes.size());
}

constexpr uint64_t HangupOpC = 1;

TEST(AuthTest, TheRightSecretOpensSessionsOfEveryStrategy) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(withToken(Token)));
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  std::mt19937_64 Rng(3);
  for (Strategy S : {Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive}) {
    auto Sess = openWithConcat(Exec.address(), S, O);
    ASSERT_TRUE(Sess);
    EXPECT_TRUE(concatMatches(*Sess, byteInputs({100, 4096}, Rng)));
  }
}

// Nothing of the session exists on the executor: the connection process
// ends, and the runtime was never initialized for the peer.
TEST(AuthTest, AWrongSecretIsRefusedAndLeavesNothing) {
  TokenFile Token, Other;
  std::string RtLog = Token.dir() + "/rt.log", ExecLog = Token.dir() + "/executor.log";
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(withRuntimeLog(Token.dir(), withToken(Token))));
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Other.secret());
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Exec.address(), O, Took);
  EXPECT_EQ(Kind, FailureKind::Authentication) << Msg;
  EXPECT_TRUE(mentions(Msg, "authentication failed")) << Msg;
  EXPECT_TRUE(mentions(Msg, Exec.address())) << Msg;
  EXPECT_LT(Took, hangBound(0s));
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, paced(2s)));
  EXPECT_EQ(readFile(RtLog), "") << "the runtime ran for a peer that did not authenticate";
  // The executor logs the refusal once it is sent: it may come later.
  EXPECT_TRUE(waitForText(ExecLog, "does not match", paced(5s))) << readFile(ExecLog);
  std::string Log = readFile(ExecLog);
  std::string Peer = socketFileRun() ? "local process " : "127.0.0.1:";
  EXPECT_TRUE(mentions(Log, Peer)) << "the log names the peer: " << Log;
}

TEST(AuthTest, AHostWithoutASecretIsToldHowToGiveOne) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(withToken(Token)));
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Exec.address(), {}, Took);
  EXPECT_EQ(Kind, FailureKind::Authentication) << Msg;
  EXPECT_TRUE(mentions(Msg, "authentication failed")) << Msg;
  EXPECT_TRUE(mentions(Msg, "requires a secret")) << Msg;
  EXPECT_TRUE(mentions(Msg, "CATALYST_REMOTE_TOKEN_FILE")) << Msg;
  EXPECT_LT(Took, hangBound(0s));
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, paced(2s)));
}

// The host proves itself only to an executor that proves itself back.
TEST(AuthTest, AHostWithASecretRefusesAnExecutorThatAsksNone) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Exec.address(), O, Took);
  EXPECT_EQ(Kind, FailureKind::Authentication) << Msg;
  EXPECT_TRUE(mentions(Msg, "did not ask for the secret")) << Msg;
}

TEST(AuthTest, ATooShortSecretIsRefusedBeforeConnecting) {
  SessionOptions O;
  O.Secret = SecretBytes::copyOf("short");
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError("127.0.0.1:1", O, Took);
  EXPECT_EQ(Kind, FailureKind::Authentication) << Msg;
  EXPECT_TRUE(mentions(Msg, "at least 16")) << Msg;
}

// An eavesdropper who saw one handshake cannot reuse the host's answer: the
// executor's nonce differs every time.
TEST(AuthTest, AReplayedResponseIsRefused) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(withToken(Token)));
  using namespace wire;
  std::vector<char> Seen;
  {
    auto Fd = connectTo(Exec.address(), 2s);
    ASSERT_TRUE(bool(Fd)) << llvm::toString(Fd.takeError());
    uint64_t OpC;
    std::vector<char> Body;
    ASSERT_TRUE(readFrame(*Fd, OpC, Body));
    ASSERT_EQ(OpC, uint64_t(AuthOpcode::Challenge));
    ASSERT_EQ(Body.size(), 16 + NonceSize);
    uint64_t Wire = llvm::support::endian::read64le(Body.data() + 8);
    bool SocketFile = llvm::StringRef(Exec.address()).starts_with("unix:");
    EXPECT_EQ(Wire, uint64_t(SocketFile ? WireMode::Plain : WireMode::Tls))
        << "TLS is the default over TCP with a token; socket files stay plain";
    Nonce FromExecutor, FromHost{};
    std::copy(Body.begin() + 16, Body.end(), FromExecutor.begin());
    auto Proof = prove(Token.secret(), Prover::Host, {Wire, Wire}, FromExecutor, FromHost);
    ASSERT_TRUE(bool(Proof));
    Seen.assign(FromHost.begin(), FromHost.end());
    Seen.resize(Seen.size() + 8);
    llvm::support::endian::write64le(Seen.data() + NonceSize, Wire);
    Seen.insert(Seen.end(), Proof->begin(), Proof->end());
    ASSERT_TRUE(sendAll(*Fd, frame(uint64_t(AuthOpcode::Response), Seen)));
    ASSERT_TRUE(readFrame(*Fd, OpC, Body));
    EXPECT_EQ(OpC, uint64_t(AuthOpcode::Proof)) << "the genuine answer is accepted";
    ::close(*Fd);
  }
  auto Fd = connectTo(Exec.address(), 2s);
  ASSERT_TRUE(bool(Fd)) << llvm::toString(Fd.takeError());
  uint64_t OpC;
  std::vector<char> Body;
  ASSERT_TRUE(readFrame(*Fd, OpC, Body));
  ASSERT_EQ(OpC, uint64_t(AuthOpcode::Challenge));
  ASSERT_TRUE(sendAll(*Fd, frame(uint64_t(AuthOpcode::Response), Seen)));
  ASSERT_TRUE(readFrame(*Fd, OpC, Body));
  EXPECT_EQ(OpC, HangupOpC);
  EXPECT_TRUE(mentions(std::string(Body.begin(), Body.end()), "authentication failed"));
  EXPECT_TRUE(closedByPeer(*Fd));
  ::close(*Fd);
}

// Nobody can pose as an executor without the secret: an impostor that
// answers with the wrong proof is refused.
TEST(AuthTest, AnExecutorThatCannotProveItselfIsRefused) {
  TokenFile Token;
  FakeExecutor Impostor([](int Fd) {
    std::vector<char> Challenge(16 + wire::NonceSize, 7);
    llvm::support::endian::write64le(Challenge.data() + 8, uint64_t(wire::WireMode::Tls));
    llvm::support::endian::write64le(Challenge.data(), wire::AuthVersion);
    sendAll(Fd, frame(uint64_t(wire::AuthOpcode::Challenge), Challenge));
    uint64_t OpC;
    std::vector<char> Body;
    readFrame(Fd, OpC, Body);
    sendAll(Fd, frame(uint64_t(wire::AuthOpcode::Proof), std::vector<char>(wire::MacSize, 1)));
    closedByPeer(Fd);
  });
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Impostor.Address, O, Took);
  EXPECT_EQ(Kind, FailureKind::Authentication) << Msg;
  EXPECT_TRUE(mentions(Msg, "authentication failed")) << Msg;
  EXPECT_TRUE(mentions(Msg, "does not match this host's secret")) << Msg;
}

// A peer that starts a handshake and stops cannot hold open() beyond its
// deadline, wherever it stops.
TEST(AuthTest, AStalledHandshakeEndsOpenAtItsDeadline) {
  std::vector<std::function<void(int)>> Stalls = {
      [](int Fd) { sendAll(Fd, {'x'}); },
      [](int Fd) {
        std::vector<char> Challenge(16 + wire::NonceSize, 0);
        llvm::support::endian::write64le(Challenge.data(), wire::AuthVersion);
        llvm::support::endian::write64le(Challenge.data() + 8, uint64_t(wire::WireMode::Tls));
        sendAll(Fd, frame(uint64_t(wire::AuthOpcode::Challenge), Challenge));
      },
      [](int Fd) {
        auto Setup = frame(0, std::vector<char>(200, 0));
        Setup.resize(100); // half of the setup message
        sendAll(Fd, Setup);
      }};
  TokenFile Token;
  for (size_t I = 0; I < Stalls.size(); ++I) {
    FakeExecutor Staller([&, I](int Fd) {
      Stalls[I](Fd);
      closedByPeer(Fd);
    });
    SessionOptions O;
    O.HandshakeTimeout = 300ms;
    if (I == 1)
      O.Secret = SecretBytes::copyOf(Token.secret());
    std::chrono::milliseconds Took;
    auto [Kind, Msg] = openError(Staller.Address, O, Took);
    EXPECT_EQ(Kind, FailureKind::Timeout) << "stall " << I << ": " << Msg;
    EXPECT_TRUE(mentions(Msg, "in time")) << "stall " << I << ": " << Msg;
    EXPECT_GE(Took, 250ms) << "stall " << I;
    EXPECT_LT(Took, hangBound(300ms)) << "stall " << I;
  }
}

// Authentication and the setup message are not all of open(): the
// executor's first replies (zero-copy enabled, a slab reserved) fall within
// the same deadline. A relay passes the real executor's setup message on
// and then nothing more.
TEST(AuthTest, AnExecutorSilentAfterItsSetupMessageCannotHoldOpen) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  FakeExecutor Relay([&](int Host) {
    auto Real = connectTo(Exec.address(), 2s);
    if (!Real)
      return llvm::consumeError(Real.takeError()); // the test then fails on open
    uint64_t OpC;
    std::vector<char> Body;
    if (readFrame(*Real, OpC, Body))
      sendAll(Host, frame(OpC, Body));
    closedByPeer(Host);
    ::close(*Real);
  });
  SessionOptions O;
  O.HandshakeTimeout = 400ms;
  // The relay passes the executor's offer of its local socket on too: over
  // it, the host would not need the relay.
  O.Transport = TransportKind::Tcp;
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Relay.Address, O, Took);
  EXPECT_EQ(Kind, FailureKind::Timeout) << Msg;
  EXPECT_TRUE(mentions(Msg, "did not complete the session's setup within 400 ms")) << Msg;
  EXPECT_LT(Took, hangBound(400ms));
}

// A setup message whose counts its bytes cannot hold (a target triple of
// 2^60 characters in 16 bytes) is refused before ORC decodes it, which
// would reserve for the count first and take the host down.
TEST(AuthTest, AMalformedSetupMessageIsRefused) {
  FakeExecutor Liar([](int Fd) {
    std::vector<char> Body(16, 0);
    llvm::support::endian::write64le(Body.data(), uint64_t(1) << 60);
    sendAll(Fd, frame(0, Body));
    closedByPeer(Fd);
  });
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = openError(Liar.Address, {}, Took);
  EXPECT_EQ(Kind, FailureKind::Other) << "a peer that breaks the protocol: " << Msg;
  EXPECT_TRUE(mentions(Msg, "setup message is malformed")) << Msg;
}

} // namespace
