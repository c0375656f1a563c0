//===- StartupTest.cpp - Peers that have not authenticated yet ------------===//
//
// Peers that have proven nothing count against a budget of their own
// (--max-startups, --max-startups-per-source), never as sessions: silent,
// trickling or departing peers from other addresses cannot keep a real host
// out. With a token the listener challenges a peer itself and forks only
// for one that proved it knows the secret; without one a peer is admitted
// by its whole first message, which must come within --handshake-timeout
// and may not be larger than a first message can be. Hostile peers here
// connect from 127.0.0.2 and up; the real host from 127.0.0.1.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "Text.h"
#include "TokenFile.h"
#include "wire/Framing.h"

#include "llvm/Support/Endian.h"

#include <algorithm>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

uint16_t portOf(const std::string &Address) {
  return uint16_t(std::stoi(Address.substr(Address.rfind(':') + 1)));
}

// A TCP connection to the executor from 127.0.0.Host; Blocking or not.
int connectFrom(int Host, const std::string &Address, bool Blocking = false) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (Blocking ? 0 : SOCK_NONBLOCK), 0);
  sockaddr_in From{};
  From.sin_family = AF_INET;
  From.sin_addr.s_addr = htonl((127u << 24) | unsigned(Host));
  if (::bind(Fd, reinterpret_cast<sockaddr *>(&From), sizeof(From)) != 0)
    ADD_FAILURE() << "bind 127.0.0." << Host << ": " << std::strerror(errno);
  sockaddr_in To{};
  To.sin_family = AF_INET;
  To.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  To.sin_port = htons(portOf(Address));
  if (::connect(Fd, reinterpret_cast<sockaddr *>(&To), sizeof(To)) != 0 && errno != EINPROGRESS)
    ADD_FAILURE() << "connect: " << std::strerror(errno);
  return Fd;
}

// How many connections wait in the accept queue of the TCP listener on
// Port: the rx_queue of its LISTEN line in /proc/net/tcp or tcp6; -1 when
// there is none.
int64_t acceptQueue(uint16_t Port) {
  for (const char *Table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream In(readFile(Table));
    std::string Line;
    std::getline(In, Line); // the column names
    while (std::getline(In, Line)) {
      std::istringstream Fields(Line);
      std::string Slot, Local, Remote, State, Queues;
      Fields >> Slot >> Local >> Remote >> State >> Queues;
      size_t PortAt = Local.rfind(':'), RxAt = Queues.find(':');
      if (State == "0A" && PortAt != std::string::npos && RxAt != std::string::npos &&
          std::stoul(Local.substr(PortAt + 1), nullptr, 16) == Port)
        return std::stoll(Queues.substr(RxAt + 1), nullptr, 16);
    }
  }
  return -1;
}

// Waits until each of Peers has connected and the executor's listener has
// accepted them all (its accept queue is empty), so that a host connecting
// next meets them.
::testing::AssertionResult takenIn(const std::vector<int> &Peers, const std::string &Address) {
  auto Connected = [&] {
    return std::all_of(Peers.begin(), Peers.end(), [](int Fd) {
      pollfd P{Fd, POLLOUT, 0};
      return ::poll(&P, 1, 0) > 0;
    });
  };
  if (waitUntil([&] { return Connected() && acceptQueue(portOf(Address)) == 0; },
                paced(std::chrono::milliseconds(10000))))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the listener did not take in " << Peers.size()
                                       << " peers within 10 s (connected: " << Connected()
                                       << ", accept queue: " << acceptQueue(portOf(Address)) << ")";
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

std::string secondsArg(std::chrono::milliseconds D) {
  char Text[32];
  std::snprintf(Text, sizeof(Text), "%.3f", D.count() / 1000.0);
  return Text;
}

// Lines of the executor's log about peers: not the one saying where its
// secret came from, written once at start, nor the warning a sanitizer
// build gives about its allocator.
size_t logLines(const std::string &Log) {
  return countOf(Log, "\n") - countOf(Log, "hosts must prove they know the secret") -
         countOf(Log, "malloc is not mimalloc's");
}

struct Lab {
  TokenFile Token;
  ExecutorProcess Exec;
  std::string Log = Token.dir() + "/executor.log";

  ::testing::AssertionResult start(bool WithToken, std::vector<std::string> Args) {
    if (WithToken)
      Args.insert(Args.end(), {"--token-file", Token.path()});
    return Exec.start({false, {}, {}, Args, Log});
  }
  SessionOptions host(bool WithToken) const {
    SessionOptions O;
    if (WithToken)
      O.Secret = SecretBytes::copyOf(Token.secret());
    return O;
  }
};

class SilentPeersTest : public ::testing::TestWithParam<bool> {};

// 200 silent peers from 20 other addresses: with a token none of them gets
// a process and a real host opens and launches within a second; without
// one they hold at most the startup budget's processes, and the host still
// gets in within its handshake timeout. Every silent peer is dropped at the
// deadline, or at once as over budget, and told which.
TEST_P(SilentPeersTest, DoNotKeepARealHostOut) {
  bool WithToken = GetParam();
  const auto Timeout = paced(2s);
  Lab L;
  ASSERT_TRUE(L.start(WithToken, {"--handshake-timeout", secondsArg(Timeout)}));
  auto Started = Clock::now();
  std::vector<int> Peers;
  for (int I = 0; I < 200; ++I)
    Peers.push_back(connectFrom(2 + I % 20, L.Exec.address()));
  // Both the host's attempts and the silent peers are on their way: the
  // host goes once the listener has taken the peers in.
  ASSERT_TRUE(takenIn(Peers, L.Exec.address()));
  auto Began = Clock::now();
  auto S = openSession(L.Exec.address(), L.host(WithToken));
  ASSERT_TRUE(S);
  ASSERT_FALSE(bool(S->sendBinary(kernelObject("concat"), BinaryFormat::Object)));
  std::mt19937_64 Rng(3);
  EXPECT_TRUE(concatMatches(*S, byteInputs({4096}, Rng)));
  auto Took = Clock::now() - Began;
  size_t Processes = L.Exec.connectionPids().size();
  if (WithToken) {
    // Served before the silent peers' deadline, which is what keeping it
    // out would take; no closer bound, which only a loaded machine breaks.
    EXPECT_LT(Took, Timeout);
    EXPECT_EQ(Processes, 1u) << "only the host that authenticated has a process";
  } else {
    EXPECT_LE(Processes, 101u) << "silent peers hold at most --max-startups' FULL processes";
  }
  size_t Closed = 0, Told = 0;
  auto Deadline = Clock::now() + Timeout + paced(3s);
  for (int Fd : Peers) {
    std::string Seen;
    Closed += drainUntilClosed(Fd, Seen, Deadline);
    Told += mentions(Seen, "--handshake-timeout") || mentions(Seen, "executor busy");
    ::close(Fd);
  }
  EXPECT_EQ(Closed, 200u) << "every silent peer is dropped by its deadline";
  EXPECT_EQ(Told, 200u) << "and told why";
  EXPECT_TRUE(S->connected());
  // At most the first refusal and a summary for each 10 s begun.
  std::string Log = readFile(L.Log);
  auto Intervals = size_t((Clock::now() - Started) / 10s) + 1;
  EXPECT_LE(countOf(Log, "refused"), 2 * Intervals) << "refusals are summarized:\n" << Log;
}

INSTANTIATE_TEST_SUITE_P(Modes, SilentPeersTest, ::testing::Bool(),
                         [](const auto &Info) { return Info.param ? "Token" : "NoToken"; });

// With a token, a peer that connects and leaves costs the executor no
// process and no log line of its own.
TEST(StartupTest, APeerThatConnectsAndLeavesCostsNoProcess) {
  Lab L;
  ASSERT_TRUE(L.start(true, {}));
  for (int I = 0; I < 500; ++I)
    ::close(connectFrom(2 + I % 50, L.Exec.address(), /*Blocking=*/true));
  SessionOptions O = L.host(true);
  O.Transport = TransportKind::Tcp; // one connection, one process
  auto S = openSession(L.Exec.address(), O);
  ASSERT_TRUE(S);
  std::string Log = readFile(L.Log);
  EXPECT_EQ(countOf(Log, "served by process"), 1u) << Log;
  EXPECT_LE(logLines(Log), 2u) << Log;
}

// Without a token a peer gets a process before it speaks; one that leaves
// at once, even before the executor's setup message is out, leaves no
// process behind and no log line of its own.
TEST(StartupTest, PeersThatLeaveAtOnceLeaveNoProcessBehind) {
  Lab L;
  ASSERT_TRUE(
      L.start(false, {"--max-startups", "1000:30:1000", "--max-startups-per-source", "1000"}));
  for (int I = 0; I < 300; ++I)
    ::close(connectFrom(2, L.Exec.address(), /*Blocking=*/true));
  std::vector<pid_t> Pids;
  EXPECT_TRUE(L.Exec.waitForConnections(0, Pids, paced(10s)))
      << Pids.size() << " connection processes are left";
  std::string Log = readFile(L.Log);
  EXPECT_LE(logLines(Log), 2u) << Log;
}

// With few descriptors (ulimit -n) the budget shrinks to what fits, the
// executor says so, and a flood cannot make accept() fail for a host.
TEST(StartupTest, AFewDescriptorsShrinkTheBudgetAndTheHostStillGetsIn) {
  Lab L;
  ExecutorOptions O{false,
                    {},
                    {},
                    {"--token-file", L.Token.path(), "--max-connections", "8",
                     "--handshake-timeout", secondsArg(paced(1s))},
                    L.Log};
  O.Prefix = {"/usr/bin/prlimit", "--nofile=200:200", "--"};
  ASSERT_TRUE(L.Exec.start(O));
  std::vector<int> Peers;
  for (int I = 0; I < 300; ++I)
    Peers.push_back(connectFrom(2 + I % 30, L.Exec.address()));
  ASSERT_TRUE(takenIn(Peers, L.Exec.address()));
  auto S = openSession(L.Exec.address(), L.host(true));
  EXPECT_TRUE(S);
  for (int Fd : Peers)
    ::close(Fd);
  std::string Log = readFile(L.Log);
  EXPECT_TRUE(mentions(Log, "only 200 descriptors (ulimit -n): at most 120 peers")) << Log;
  EXPECT_FALSE(mentions(Log, "accept on")) << Log;
}

// One address may hold at most --max-startups-per-source peers that have
// not authenticated; more are told the executor is busy, and a host from
// another address is not affected.
TEST(StartupTest, PeersBeyondTheSourceBudgetAreToldTheExecutorIsBusy) {
  Lab L;
  ASSERT_TRUE(L.start(true, {"--max-startups-per-source", "3"}));
  std::vector<int> Peers;
  for (int I = 0; I < 5; ++I)
    Peers.push_back(connectFrom(2, L.Exec.address()));
  auto S = openSession(L.Exec.address(), L.host(true));
  EXPECT_TRUE(S);
  size_t Busy = 0;
  for (int Fd : Peers) {
    std::string Seen;
    drainUntilClosed(Fd, Seen, Clock::now() + paced(300ms));
    Busy += mentions(Seen, "--max-startups-per-source");
    ::close(Fd);
  }
  EXPECT_EQ(Busy, 2u);
}

// A host told the executor is busy tries again until its handshake
// timeout: once the silent peers' deadline frees the budget, it gets in.
TEST(StartupTest, AHostRetriesWhileTheExecutorIsBusy) {
  const auto Timeout = paced(1s);
  Lab L;
  ASSERT_TRUE(L.start(true, {"--max-startups", "2", "--handshake-timeout", secondsArg(Timeout)}));
  int A = connectFrom(2, L.Exec.address()), B = connectFrom(3, L.Exec.address());
  ASSERT_TRUE(takenIn({A, B}, L.Exec.address()));
  auto Began = Clock::now();
  auto S = openSession(L.Exec.address(), L.host(true));
  EXPECT_TRUE(S);
  EXPECT_GE(Clock::now() - Began, Timeout / 2) << "the budget was full until the peers expired";
  ::close(A);
  ::close(B);
}

// A host that stays busy past its own handshake timeout is told why.
TEST(StartupTest, AHostBusyUntilItsDeadlineSaysSo) {
  Lab L;
  ASSERT_TRUE(L.start(true, {"--max-startups", "1"}));
  int A = connectFrom(2, L.Exec.address());
  ASSERT_TRUE(takenIn({A}, L.Exec.address()));
  SessionOptions O = L.host(true);
  O.HandshakeTimeout = 300ms;
  auto S = Session::open(L.Exec.address(), forThisRun(O));
  ASSERT_FALSE(S);
  auto [Kind, Msg] = reportFailure(S.takeError());
  EXPECT_EQ(Kind, FailureKind::Busy) << Msg;
  EXPECT_TRUE(mentions(Msg, "executor busy")) << Msg;
  EXPECT_TRUE(mentions(Msg, "--max-startups")) << Msg;
  ::close(A);
}

// An EPC frame header announcing Size bytes of a call.
std::string header(uint64_t Size) {
  char H[32] = {};
  llvm::support::endian::write64le(H, Size);
  llvm::support::endian::write64le(H + 8, 3); // CallWrapper
  return std::string(H, sizeof(H));
}

// Without a token the deadline covers the whole first message: a peer
// that trickles it in is dropped on time, told why.
TEST(StartupTest, ATricklingPeerIsDroppedAtTheDeadline) {
  const auto Timeout = paced(1s);
  Lab L;
  ASSERT_TRUE(L.start(false, {"--handshake-timeout", secondsArg(Timeout)}));
  int Fd = connectFrom(2, L.Exec.address(), /*Blocking=*/true);
  std::string H = header(1024);
  auto Began = Clock::now();
  bool Closed = false;
  std::string Seen;
  for (size_t I = 0; I < H.size() && !Closed; ++I) {
    if (::send(Fd, &H[I], 1, MSG_NOSIGNAL) != 1)
      break;
    Closed = drainUntilClosed(Fd, Seen, Clock::now() + 100ms);
  }
  if (!Closed)
    Closed = drainUntilClosed(Fd, Seen, Began + Timeout + paced(2s));
  EXPECT_TRUE(Closed);
  EXPECT_LT(Clock::now() - Began, Timeout + paced(2s));
  EXPECT_TRUE(mentions(Seen, "--handshake-timeout")) << Seen;
  ::close(Fd);
}

// Without a token a heartbeat is no first message: only an executor sends
// one, so the executor refuses it and ends the connection at once rather
// than take the peer for a host (a session with no deadline, beyond the
// startup budget).
TEST(StartupTest, AHeartbeatFromThePeerDoesNotAdmitIt) {
  Lab L;
  ASSERT_TRUE(L.start(false, {"--handshake-timeout", "60"}));
  int Fd = connectFrom(2, L.Exec.address(), /*Blocking=*/true);
  std::string H = header(32);
  llvm::support::endian::write64le(H.data() + 8, wire::HeartbeatOpcode);
  ASSERT_EQ(::send(Fd, H.data(), H.size(), MSG_NOSIGNAL), ssize_t(H.size()));
  std::string Seen;
  EXPECT_TRUE(drainUntilClosed(Fd, Seen, Clock::now() + paced(5s)))
      << "the peer is still connected, admitted by a heartbeat";
  ::close(Fd);
}

// Without a token, a first message larger than any host's first message
// is refused from its header: nothing is reserved for it.
TEST(StartupTest, AHugeFirstMessageIsRefusedFromItsHeader) {
  Lab L;
  ASSERT_TRUE(L.start(false, {}));
  int Fd = connectFrom(2, L.Exec.address(), /*Blocking=*/true);
  std::string H = header(uint64_t(8) << 30);
  ASSERT_EQ(::send(Fd, H.data(), H.size(), MSG_NOSIGNAL), ssize_t(H.size()));
  std::string Seen;
  EXPECT_TRUE(drainUntilClosed(Fd, Seen, Clock::now() + paced(5s)));
  EXPECT_TRUE(mentions(Seen, "first message of 8589934592 bytes; the limit is 65536")) << Seen;
  ::close(Fd);
  // A host still opens and launches.
  auto S = openSession(L.Exec.address());
  ASSERT_TRUE(S);
}

} // namespace
