//===- ExecutorBoundsTest.cpp - What a peer may cost an executor ----------===//
//
// An executor serves at most --max-connections sessions at once and
// refuses more with a message the host reports; a host that opened a
// session is not dropped by the handshake timeout however long it idles; a
// host may reserve at most --max-slab-mib of executor memory. Peers that
// never authenticate are StartupTest's.
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

std::string secondsArg(std::chrono::milliseconds D) {
  return std::to_string(D.count() / 1000) + "." + std::to_string(D.count() % 1000 / 100);
}

TEST(ExecutorBoundsTest, AConnectionBeyondTheCapIsRefusedWithTheReason) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--max-connections", "2"}}));
  auto A = openSession(Exec.address()), B = openSession(Exec.address());
  ASSERT_TRUE(A && B);
  auto C = Session::open(Exec.address(), forThisRun({}));
  ASSERT_FALSE(C);
  auto [Kind, Msg] = reportFailure(C.takeError());
  EXPECT_EQ(Kind, FailureKind::Busy) << "a place may free up: " << Msg;
  EXPECT_TRUE(mentions(Msg, "executor at capacity: 2 sessions")) << Msg;
  EXPECT_EQ(messageOf(A->close()), "");
  // The listener frees the place once it has reaped A's process, which
  // may take a moment: retried until then, refused only for capacity.
  auto Deadline = Clock::now() + paced(5s);
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
    O.Strategy = S;
    Sessions.push_back(openSession(Exec.address(), O));
    ASSERT_TRUE(Sessions.back());
  }
  // Idle past the timeout twice over: the time passing is what is tested.
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
