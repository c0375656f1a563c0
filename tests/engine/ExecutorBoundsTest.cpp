//===- ExecutorBoundsTest.cpp - What a peer may cost an executor ----------===//
//
// An executor serves at most --max-connections connections at once and
// refuses more with a message the host reports; a peer that does not
// authenticate (or, without a token, does not speak) within
// --handshake-timeout is dropped and its process exits; a host may reserve
// at most --max-slab-mib of executor memory. Silent peers here are plain
// TCP connections that never send a byte.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Text.h"
#include "TokenFile.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// Starts a non-blocking connect to the executor's loopback port.
int connectSilently(const std::string &Address) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  A.sin_port = htons(uint16_t(std::stoi(Address.substr(Address.rfind(':') + 1))));
  if (::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) != 0 && errno != EINPROGRESS)
    ADD_FAILURE() << "connect: " << std::strerror(errno);
  return Fd;
}

// Reads what the executor sends on Fd until it closes it or Deadline
// passes; false on the deadline.
bool drainUntilClosed(int Fd, std::string &Seen, Clock::time_point Deadline) {
  char Buf[4096];
  for (;;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    pollfd P{Fd, POLLIN, 0};
    if (Left.count() <= 0 || ::poll(&P, 1, int(Left.count())) <= 0)
      return false;
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N == 0 || (N < 0 && errno != EAGAIN && errno != EINTR))
      return true;
    if (N > 0)
      Seen.append(Buf, size_t(N));
  }
}

// The executor's --handshake-timeout for the silent-peer tests: long enough
// for it to take all 200 peers before dropping the first it served.
const auto SilentPeerTimeout = paced(std::chrono::seconds(1));

std::string secondsArg(std::chrono::milliseconds D) {
  return std::to_string(D.count() / 1000) + "." + std::to_string(D.count() % 1000 / 100);
}

// 200 silent peers against the default cap of 64: the executor never
// serves more than 64 at once, refuses the rest saying so, and drops those
// it served once the handshake timeout has passed.
void expectSilentPeersDropped(const ExecutorOptions &Options) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(Options));
  std::vector<int> Peers;
  size_t MostServed = 0;
  for (int I = 0; I < 200; ++I) {
    Peers.push_back(connectSilently(Exec.address()));
    if (I % 20 == 19)
      MostServed = std::max(MostServed, Exec.connectionPids().size());
  }
  auto Start = Clock::now();
  while (Clock::now() - Start < 500ms) {
    MostServed = std::max(MostServed, Exec.connectionPids().size());
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_LE(MostServed, 64u);
  EXPECT_GT(MostServed, 0u) << "some peers were served";
  size_t Closed = 0, Refused = 0;
  auto Deadline = Clock::now() + SilentPeerTimeout + paced(4s);
  for (int Fd : Peers) {
    std::string Seen;
    Closed += drainUntilClosed(Fd, Seen, Deadline);
    Refused += mentions(Seen, "executor at capacity: 64 sessions");
    ::close(Fd);
  }
  EXPECT_EQ(Closed, 200u) << "every silent peer is dropped within the timeout";
  // The first 64 are served; the timeout outlasts taking all 200, so no
  // place is freed before the last is refused. (MostServed, sampled from
  // /proc, may miss processes still being forked.)
  EXPECT_EQ(Refused, 200u - 64u) << "every peer beyond the cap is refused, saying why";
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, paced(2s)));
}

TEST(ExecutorBoundsTest, SilentPeersAreCappedAndDroppedWithoutAToken) {
  expectSilentPeersDropped({false, {}, {}, {"--handshake-timeout", secondsArg(SilentPeerTimeout)}});
}

TEST(ExecutorBoundsTest, SilentPeersAreCappedAndDroppedWithAToken) {
  TokenFile Token;
  expectSilentPeersDropped(
      {false,
       {},
       {},
       {"--handshake-timeout=" + secondsArg(SilentPeerTimeout), "--token-file", Token.path()}});
}

TEST(ExecutorBoundsTest, AConnectionBeyondTheCapIsRefusedWithTheReason) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--max-connections", "2"}}));
  auto A = openSession(Exec.address()), B = openSession(Exec.address());
  ASSERT_TRUE(A && B);
  auto C = Session::open(Exec.address(), forThisRun({}));
  ASSERT_FALSE(C);
  std::string Msg = llvm::toString(C.takeError());
  EXPECT_TRUE(mentions(Msg, "executor at capacity: 2 sessions")) << Msg;
  EXPECT_EQ(messageOf(A->close()), "");
  // The listener frees the place once it has reaped A's process, which
  // may take a moment: retried until then, refused only for capacity.
  auto Deadline = Clock::now() + 5s;
  for (;;) {
    auto D = Session::open(Exec.address());
    if (D)
      break;
    Msg = llvm::toString(D.takeError());
    ASSERT_TRUE(mentions(Msg, "executor at capacity")) << Msg;
    ASSERT_LT(Clock::now(), Deadline) << "a place freed was not taken within 5 s: " << Msg;
    std::this_thread::sleep_for(20ms);
  }
}

// Without a token a peer must speak within the timeout; a host that opened
// a session and then waits is not dropped, whatever its strategy.
TEST(ExecutorBoundsTest, AnIdleHostIsNotDroppedByTheHandshakeTimeout) {
  ExecutorProcess Exec;
  const auto Timeout = paced(300ms);
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--handshake-timeout", secondsArg(Timeout)}}));
  std::vector<std::unique_ptr<Session>> Sessions;
  for (Strategy S : {Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive}) {
    SessionOptions O;
    O.Transfer = S;
    Sessions.push_back(openSession(Exec.address(), O));
    ASSERT_TRUE(Sessions.back());
  }
  std::this_thread::sleep_for(2 * Timeout);
  std::mt19937_64 Rng(5);
  for (auto &S : Sessions) {
    ASSERT_TRUE(S->connected());
    ASSERT_FALSE(bool(S->sendBinary(kernelObject("concat"), BinaryFormat::Object)));
    EXPECT_TRUE(concatMatches(*S, byteInputs({64}, Rng)));
  }
}

class ExecutorMemoryCapTest : public ::testing::TestWithParam<Strategy> {};

// One host may not reserve more executor memory than --max-slab-mib; the
// launch that would is refused naming the option, and the session goes on.
TEST_P(ExecutorMemoryCapTest, ALaunchBeyondTheCapFailsAndTheSessionGoesOn) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--max-slab-mib", "64"}}));
  SessionOptions O;
  O.CodeSlabSize = 16 << 20;
  O.SlabInitial = 1 << 20;
  auto S = openWithConcat(Exec.address(), GetParam(), O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(7);
  auto R = concatMatches(*S, byteInputs({96 << 20}, Rng));
  ASSERT_FALSE(R);
  EXPECT_TRUE(mentions(R.message(), "--max-slab-mib")) << R.message();
  EXPECT_TRUE(concatMatches(*S, byteInputs({4096}, Rng)));
}

INSTANTIATE_TEST_SUITE_P(Capped, ExecutorMemoryCapTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched),
                         [](const auto &Info) { return strategyTestName(Info.param); });

} // namespace
