//===- WireProtectionTest.cpp - TLS after the handshake -------------------===//
//
// With a token, a session over TCP carries its bytes in TLS 1.3 records
// keyed by the token and the handshake's nonces: whoever relays the
// connection can forward the handshake but can neither read what follows
// nor alter or add a byte without the session ending, named as tampering.
// Both ends must agree on it (--wire, CATALYST_REMOTE_WIRE): a mismatch
// fails on both, naming both settings. Sessions over socket files and the
// local socket stay plain.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "Deaths.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "TamperRelay.h"
#include "Text.h"
#include "TokenFile.h"
#include "wire/TlsStream.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <future>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <random>
#include <sys/socket.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

// An executor on a loopback TCP port ("0": not the default address, which
// a socket-file run turns into a socket file) with Token.
ExecutorOptions tcpWithToken(const TokenFile &Token, std::vector<std::string> More = {}) {
  ExecutorOptions EO;
  EO.Bind = "0";
  EO.Args = {"--token-file", Token.path()};
  EO.Args.insert(EO.Args.end(), More.begin(), More.end());
  return EO;
}

SessionOptions overTcp(const TokenFile &Token, WireProtection W = WireProtection::Auto) {
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  O.Transport = TransportKind::Tcp;
  O.Wire = W;
  return O;
}

std::string openError(const std::string &Address, const SessionOptions &O) {
  auto S = Session::open(Address, O);
  return S ? std::string() : llvm::toString(S.takeError());
}

class WireProtectionTest : public ::testing::TestWithParam<Strategy> {};

// Every strategy runs over TLS, small and large payloads alike.
TEST_P(WireProtectionTest, ATcpSessionWithATokenIsTlsByDefault) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(tcpWithToken(Token)));
  auto S = openWithConcat(Exec.address(), GetParam(), overTcp(Token));
  ASSERT_TRUE(S);
  EXPECT_TRUE(mentions(S->protection(), "TLSv1.3 TLS_AES_128_GCM_SHA256")) << S->protection();
  std::mt19937_64 Rng(7);
  for (int64_t Bytes : {0, 8, 70000, 5 << 20})
    EXPECT_TRUE(concatMatches(*S, byteInputs({Bytes, 3, Bytes / 2}, Rng))) << Bytes;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, WireProtectionTest,
                         ::testing::Values(Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy),
                         [](const auto &Info) { return strategyTestName(Info.param); });

TEST(WireProtection, TheLocalSocketAndPlainWireStayPlainAndAutoFollows) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(tcpWithToken(Token)));
  SessionOptions Local = overTcp(Token);
  Local.Transport = TransportKind::Local;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, Local);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->protection(), "plain");

  ExecutorProcess Plain;
  ASSERT_TRUE(Plain.start(tcpWithToken(Token, {"--wire", "plain"})));
  auto P =
      openWithConcat(Plain.address(), Strategy::ZeroCopy, overTcp(Token, WireProtection::Plain));
  ASSERT_TRUE(P);
  EXPECT_EQ(P->protection(), "plain");
  // A host that leaves it to the executor follows it.
  auto Follows = openSession(Plain.address(), overTcp(Token));
  ASSERT_TRUE(Follows);
  EXPECT_EQ(Follows->protection(), "plain");
  std::mt19937_64 Rng(1);
  EXPECT_TRUE(concatMatches(*P, byteInputs({100, 3}, Rng)));
}

// Each end says what the other wanted, and the executor logs it.
TEST(WireProtection, AMismatchFailsOnBothEndsNamingBoth) {
  TokenFile Token;
  std::string Log = Token.dir() + "/executor.log";
  ExecutorOptions EO = tcpWithToken(Token, {"--wire", "plain"});
  EO.LogPath = Log;
  ExecutorProcess Plain;
  ASSERT_TRUE(Plain.start(EO));
  std::string Msg = openError(Plain.address(), overTcp(Token, WireProtection::Tls));
  EXPECT_TRUE(mentions(Msg, "the executor's is plain (catalyst-remote-executor --wire plain"))
      << Msg;
  EXPECT_TRUE(mentions(Msg, "this host's is tls (CATALYST_REMOTE_WIRE=tls")) << Msg;
  ExecutorProcess Tls;
  ASSERT_TRUE(Tls.start(tcpWithToken(Token)));
  Msg = openError(Tls.address(), overTcp(Token, WireProtection::Plain));
  EXPECT_TRUE(mentions(Msg, "the executor's is tls")) << Msg;
  EXPECT_TRUE(mentions(Msg, "this host's is plain (CATALYST_REMOTE_WIRE=plain")) << Msg;
  EXPECT_TRUE(waitForText(Log, "wants other wire protection", 5s)) << readFile(Log);
}

TEST(WireProtection, TlsNeedsAToken) {
  CommandResult R = runCommand({executorPath(), "--bind", "127.0.0.1:0", "--wire", "tls"});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "--wire tls needs a token (--token-file")) << R.Output;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Wire = WireProtection::Tls;
  std::string Msg = openError(Exec.address(), O);
  EXPECT_TRUE(mentions(Msg, "needs the executor's token")) << Msg;
}

// Catalyst's own host speaks plain EPC: an executor for it stays plain and
// on loopback.
TEST(WireProtection, UpstreamOnlyStaysPlainAndOnLoopback) {
  TokenFile Token;
  CommandResult R = runCommand(
      {executorPath(), "--bind", "0.0.0.0:0", "--upstream-only", "--token-file", Token.path()});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "with --upstream-only")) << R.Output;
  R = runCommand({executorPath(), "--bind", "127.0.0.1:0", "--upstream-only", "--token-file",
                  Token.path(), "--wire", "tls"});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "--wire tls cannot go with --upstream-only")) << R.Output;
  ExecutorOptions EO = tcpWithToken(Token);
  EO.UpstreamOnly = true;
  ExecutorProcess Upstream;
  ASSERT_TRUE(Upstream.start(EO));
  SessionOptions O = overTcp(Token);
  O.Strategy = Strategy::Naive;
  auto S = openSession(Upstream.address(), O);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->protection(), "plain");
}

// A relay that forwarded the handshake holds a session that works...
struct Relayed {
  TokenFile Token;
  ExecutorProcess Exec;
  std::unique_ptr<TamperRelay> Relay;
  std::unique_ptr<Session> S;

  ::testing::AssertionResult open() {
    if (!Exec.start(tcpWithToken(Token)))
      return ::testing::AssertionFailure() << "no executor";
    Relay = std::make_unique<TamperRelay>(Exec.address());
    S = openWithConcat(Relay->address(), Strategy::ZeroCopy, overTcp(Token));
    if (!S)
      return ::testing::AssertionFailure() << "no session through the relay";
    std::mt19937_64 Rng(3);
    return concatMatches(*S, byteInputs({64, 3}, Rng));
  }

  // ...until the relay touches a byte: the next launch fails, saying why.
  std::string launchError() {
    std::mt19937_64 Rng(4);
    auto R = concatMatches(*S, byteInputs({4096, 5}, Rng));
    return R ? std::string() : std::string(R.message());
  }
};

TEST(WireProtection, AnAlteredRecordIsNamedTampering) {
  Relayed R;
  ASSERT_TRUE(R.open());
  R.Relay->flipNext(TamperRelay::Direction::ToHost);
  std::string Msg = R.launchError();
  EXPECT_TRUE(R.Relay->tampered());
  EXPECT_TRUE(mentions(Msg, "tampering")) << Msg;
  EXPECT_FALSE(R.S->connected());
}

TEST(WireProtection, AnInjectedFrameIsNamedTampering) {
  // A plain EPC frame, as the relay would have sent without TLS, and a
  // forged TLS record: neither reaches the executor's EPC.
  std::vector<char> Frame(32, 0);
  Frame[0] = 32;
  std::vector<char> Record = {0x17, 0x03, 0x03, 0x00, 0x40};
  Record.resize(Record.size() + 0x40, 0x5a);
  for (auto &Bytes : {Frame, Record}) {
    Relayed R;
    ASSERT_TRUE(R.open());
    R.Relay->injectNext(TamperRelay::Direction::ToExecutor, Bytes);
    std::string Msg = R.launchError();
    EXPECT_TRUE(R.Relay->tampered());
    EXPECT_TRUE(mentions(Msg, "tampering")) << Msg;
    EXPECT_FALSE(R.S->connected());
  }
}

// The executor's choice is covered by both proofs: a relay that rewrites
// the challenge to say "plain" gets the host refused, not a plain session.
TEST(WireProtection, ARelayCannotTurnTlsOff) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(tcpWithToken(Token)));
  TamperRelay Relay(Exec.address());
  // The challenge: a 32-byte header, the version, then the wire mode.
  Relay.overwriteNext(TamperRelay::Direction::ToHost, 32 + 8, 0);
  std::string Msg = openError(Relay.address(), overTcp(Token));
  EXPECT_TRUE(Relay.tampered());
  EXPECT_TRUE(mentions(Msg, "authentication failed")) << Msg;
}

// The crash reporter hands its frame to a thread that can make a record.
TEST(WireProtection, ACrashIsStillNamedOverTlsAndAnExitIsNoCrash) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(tcpWithToken(Token)));
  auto S = openSession(Exec.address(), overTcp(Token));
  ASSERT_TRUE(S);
  ASSERT_EQ(messageOf(S->sendBinary(kernelObject("deaths"), BinaryFormat::Object)), "");
  Desc Out(1, 1);
  std::string Msg =
      messageOf(S->launch({remoteEntry("die_segv"), "deaths.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(mentions(Msg, "signal 11 (Segmentation fault)")) << Msg;
  EXPECT_FALSE(mentions(Msg, "tampering")) << Msg;
  // A kernel that calls exit() cannot be named over TLS (its listener may
  // not write into the stream), but it is no crash.
  S = openSession(Exec.address(), overTcp(Token));
  ASSERT_TRUE(S);
  ASSERT_EQ(messageOf(S->sendBinary(kernelObject("deaths"), BinaryFormat::Object)), "");
  Msg = messageOf(S->launch({remoteEntry("die_exit"), "deaths.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(mentions(Msg, "closed")) << Msg;
  EXPECT_FALSE(mentions(Msg, "signal")) << Msg;
  EXPECT_FALSE(mentions(Msg, "tampering")) << Msg;
}

// Two connected TCP sockets on loopback.
std::pair<int, int> tcpPair() {
  int L = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(A);
  EXPECT_EQ(::bind(L, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
  EXPECT_EQ(::listen(L, 1), 0);
  EXPECT_EQ(::getsockname(L, reinterpret_cast<sockaddr *>(&A), &Len), 0);
  int C = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::connect(C, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
  int S = ::accept4(L, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(L);
  return {C, S};
}

using Streams = std::pair<llvm::Expected<std::unique_ptr<wire::TlsStream>>,
                          llvm::Expected<std::unique_ptr<wire::TlsStream>>>;

Streams handshakes(int C, int S, const wire::Psk &ClientKey, const wire::Psk &ServerKey) {
  auto By = std::chrono::steady_clock::now() + paced(5s);
  auto Server = std::async(std::launch::async, [&] {
    return wire::TlsStream::handshake(S, wire::TlsRole::Server, ServerKey, By);
  });
  auto Client = wire::TlsStream::handshake(C, wire::TlsRole::Client, ClientKey, By);
  return {std::move(Client), Server.get()};
}

wire::Psk keyFor(const std::string &Secret, uint8_t Salt) {
  wire::Nonce A{}, B{};
  A[0] = Salt;
  auto K = wire::derivePsk(Secret, A, B);
  EXPECT_TRUE(bool(K));
  return K ? *K : wire::Psk{};
}

// Reads Size bytes from T, or fewer if it fails or ends first.
std::vector<char> readAll(wire::TlsStream &T, size_t Size) {
  std::vector<char> Got(Size);
  size_t Have = 0;
  while (Have < Size) {
    iovec Into{Got.data() + Have, Size - Have};
    ssize_t N = T.read(&Into, 1);
    if (N <= 0)
      break;
    Have += size_t(N);
  }
  Got.resize(Have);
  return Got;
}

std::vector<char> randomBytes(size_t Size, uint64_t Seed) {
  std::vector<char> Out(Size);
  std::mt19937_64 Rng(Seed);
  for (auto &B : Out)
    B = char(Rng());
  return Out;
}

// A client and a server stream over a loopback TCP pair, keyed alike.
struct Connected {
  int C = -1, S = -1;
  std::unique_ptr<wire::TlsStream> Client, Server;

  ::testing::AssertionResult open(uint8_t Salt) {
    std::tie(C, S) = tcpPair();
    auto Key = keyFor("the-same-secret-000000", Salt);
    auto [Cl, Sv] = handshakes(C, S, Key, Key);
    if (!Cl || !Sv)
      return ::testing::AssertionFailure()
             << llvm::toString(llvm::joinErrors(Cl.takeError(), Sv.takeError()));
    Client = std::move(*Cl);
    Server = std::move(*Sv);
    return ::testing::AssertionSuccess();
  }

  ~Connected() {
    Client.reset();
    Server.reset();
    for (int Fd : {C, S})
      if (Fd >= 0)
        ::close(Fd);
  }
};

TEST(TlsStream, APeerWithAnotherKeyCannotCompleteTheHandshake) {
  auto [C, S] = tcpPair();
  auto [Client, Server] = handshakes(C, S, keyFor("a-secret-of-the-host-000", 1),
                                     keyFor("another-secret-entirely-1", 1));
  ASSERT_FALSE(bool(Client));
  ASSERT_FALSE(bool(Server));
  std::string Msg = llvm::toString(Client.takeError());
  EXPECT_TRUE(mentions(Msg, "know the token")) << Msg;
  llvm::consumeError(Server.takeError());
  // The same secret with other nonces is another key too.
  auto [C2, S2] = tcpPair();
  auto [Client2, Server2] =
      handshakes(C2, S2, keyFor("the-same-secret-000000", 1), keyFor("the-same-secret-000000", 2));
  EXPECT_FALSE(bool(Client2));
  EXPECT_FALSE(bool(Server2));
  llvm::consumeError(Client2.takeError());
  llvm::consumeError(Server2.takeError());
  for (int Fd : {C, S, C2, S2})
    ::close(Fd);
}

TEST(TlsStream, BytesGoThroughAndPeeksDoNotConsume) {
  Connected P;
  ASSERT_TRUE(P.open(9));
  auto &Client = P.Client, &Server = P.Server;
  std::vector<char> Big = randomBytes(3 << 20, 5);
  std::string Head = "header--";
  auto Writer = std::async(std::launch::async, [&] {
    iovec Iov[2] = {{Head.data(), Head.size()}, {Big.data(), Big.size()}};
    size_t Left = Head.size() + Big.size();
    int At = 0;
    while (Left > 0) {
      ssize_t N = Client->write(Iov + At, 2 - At);
      if (N <= 0)
        return false;
      Left -= size_t(N);
      for (size_t M = size_t(N); M > 0;) {
        size_t Step = std::min(M, Iov[At].iov_len);
        Iov[At].iov_base = static_cast<char *>(Iov[At].iov_base) + Step;
        Iov[At].iov_len -= Step;
        M -= Step;
        if (Iov[At].iov_len == 0)
          ++At;
      }
    }
    return true;
  });
  char Peeked[8];
  ASSERT_EQ(Server->peek(Peeked, 8, true), 8);
  EXPECT_EQ(std::string(Peeked, 8), Head);
  std::vector<char> Got = readAll(*Server, Head.size() + Big.size());
  ASSERT_EQ(Got.size(), Head.size() + Big.size()) << std::strerror(errno);
  EXPECT_TRUE(Writer.get());
  EXPECT_EQ(std::string(Got.data(), Head.size()), Head);
  EXPECT_TRUE(std::equal(Big.begin(), Big.end(), Got.begin() + Head.size()));
  EXPECT_TRUE(mentions(Server->description(), "TLS_AES_128_GCM_SHA256"));
}

// A write that its send timeout cuts short, the peer reading nothing, is
// finished by the next call with the same bytes: none lost, none twice.
TEST(TlsStream, AWriteCutShortByItsTimeoutIsFinishedByTheNext) {
  Connected P;
  ASSERT_TRUE(P.open(7));
  auto &Client = P.Client, &Server = P.Server;
  std::vector<char> Big = randomBytes(32 << 20, 11);
  Client->setSendTimeout(20ms);
  Server->setReadTimeout(paced(10s));
  size_t Sent = 0;
  bool Cut = false;
  auto WriteOnce = [&] {
    iovec V{Big.data() + Sent, Big.size() - Sent};
    ssize_t N = Client->write(&V, 1);
    if (N > 0)
      Sent += size_t(N);
    return N > 0 || errno == EAGAIN;
  };
  while (!Cut && Sent < Big.size()) {
    ASSERT_TRUE(WriteOnce()) << std::strerror(errno);
    Cut = errno == EAGAIN;
  }
  ASSERT_TRUE(Cut) << "the socket's buffers took all " << Big.size() << " bytes";
  auto Reader = std::async(std::launch::async, [&] { return readAll(*Server, Big.size()); });
  while (Sent < Big.size())
    ASSERT_TRUE(WriteOnce()) << std::strerror(errno);
  std::vector<char> Got = Reader.get();
  EXPECT_EQ(Got.size(), Big.size());
  EXPECT_TRUE(Got == Big);
}

// A record the peer did not seal fails there, and the alert the peer sends
// back reaches this end, which names it.
TEST(TlsStream, TheAlertForAForgedRecordReachesItsSender) {
  Connected P;
  ASSERT_TRUE(P.open(8));
  auto &Client = P.Client, &Server = P.Server;
  std::vector<char> Record = {0x17, 0x03, 0x03, 0x00, 0x40};
  Record.resize(Record.size() + 0x40, 0x5a);
  ASSERT_EQ(::send(P.C, Record.data(), Record.size(), MSG_NOSIGNAL), ssize_t(Record.size()));
  Server->setReadTimeout(paced(5s));
  Client->setReadTimeout(paced(5s));
  EXPECT_TRUE(readAll(*Server, 1).empty());
  EXPECT_EQ(Server->failure(), wire::TlsFailure::Tampered) << Server->failureText();
  EXPECT_TRUE(readAll(*Client, 1).empty());
  EXPECT_EQ(Client->failure(), wire::TlsFailure::TamperedThere) << Client->failureText();
}

// Kernel TLS needs the kernel's tls module (CONFIG_TLS); where it is, the
// stream's sends go through it.
TEST(TlsStream, KernelTlsWhereTheKernelOffersIt) {
  auto [C, S] = tcpPair();
  bool Offered = ::setsockopt(C, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == 0;
  int Why = errno;
  ::close(C);
  ::close(S);
  if (!Offered)
    GTEST_SKIP() << "this kernel offers no TLS (setsockopt TCP_ULP \"tls\": " << std::strerror(Why)
                 << "; CONFIG_TLS is off): OpenSSL's record layer runs";
  Connected P;
  ASSERT_TRUE(P.open(3));
  EXPECT_TRUE(P.Client->kernelSends()) << P.Client->description();
}

} // namespace
