//===- LivenessTest.cpp - A stopped executor is not waited for forever ----===//
//
// A host waiting for a reply declares the executor dead once nothing (no
// reply, no heartbeat) has arrived for SessionOptions::LivenessTimeout, and
// a host sending a request once the executor took none of it for as long
// while saying nothing: the launch fails saying so, its outputs zeroed, and
// the session is closed.
// A healthy executor running a long kernel sends heartbeats and is never
// cut. A launch past SessionOptions::LaunchTimeout fails and takes its
// connection process with it. The executor here is stopped with SIGSTOP,
// as a hung machine would be: the connection stays open and says nothing.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "Text.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// The liveness timeout of the tests in which a busy executor must not be
// cut, and a kernel that outlasts it several times. Scaled by the pace: a
// loaded sanitizer run can leave the heartbeat thread or the host's reader
// off the CPU for longer than a timeout sized for the plain build.
constexpr std::chrono::milliseconds BusyLiveness = paced(400ms);
constexpr int64_t LongKernelMs = 3 * BusyLiveness.count();

// One launch of sleepy.o: its input (how long to sleep) and its output,
// poisoned so that a failed launch must zero it.
struct Sleepy {
  int64_t Ms;
  Desc In{1, 8}, Out{1, 8};
  explicit Sleepy(int64_t Ms) : Ms(Ms) {
    In.setAllocated(&this->Ms);
    In.setAligned(&this->Ms);
    In.setSize(0, 1);
    In.setStride(0, 1);
    Out.poison();
  }
  Sleepy(const Sleepy &) = delete;
  Sleepy &operator=(const Sleepy &) = delete;
};

class LivenessTest : public ::testing::TestWithParam<Strategy> {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  void TearDown() override {
    // A stopped connection process would outlive the executor's SIGTERM.
    for (pid_t Pid : Stopped)
      ::kill(Pid, SIGKILL);
  }

  std::unique_ptr<Session> open(SessionOptions O) {
    O.Strategy = GetParam();
    auto S = openSession(Exec.address(), O);
    if (S) {
      EXPECT_EQ(S->transport(), testTransport());
      EXPECT_FALSE(bool(S->sendBinary(kernelObject("sleepy"), BinaryFormat::Object)));
    }
    return S;
  }

  // Launches sleepy for K.Ms; returns the error's kind and text (Other
  // and "" on success) and how long the launch took.
  FailureReport launch(Session &S, Sleepy &K, std::chrono::milliseconds &Took) {
    MemrefArg In{K.In.data(), 1, 8}, Out{K.Out.data(), 1, 8};
    auto Start = Clock::now();
    llvm::Error Err = S.launch({remoteEntry("sleepy"), "sleepy.o", {In}, {Out}});
    Took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - Start);
    return failureOf(std::move(Err));
  }

  // A launch on S with a liveness timeout of 1 s failed saying Says, in
  // about that time, and closed the session.
  void expectDeclaredDead(Session &S, const std::string &Msg, Clock::duration Took,
                          const std::string &Says) {
    EXPECT_TRUE(mentions(Msg, Says)) << Msg;
    EXPECT_TRUE(mentions(Msg, Exec.address())) << Msg;
    EXPECT_GE(Took, 900ms);
    EXPECT_LT(Took, hangBound(1000ms));
    EXPECT_FALSE(S.connected()) << "the session is closed";
  }

  pid_t stopConnection() {
    std::vector<pid_t> Pids;
    EXPECT_TRUE(Exec.waitForConnections(1, Pids, 5s));
    if (Pids.empty())
      return -1;
    ::kill(Pids[0], SIGSTOP);
    Stopped.push_back(Pids[0]);
    // Until each of its threads has stopped, it may still answer (a thread
    // on a CPU the hypervisor has not scheduled stops when it next runs).
    EXPECT_TRUE(waitUntilStopped(Pids[0], 5s)) << "process " << Pids[0] << " did not stop";
    return Pids[0];
  }

  ExecutorProcess Exec;
  std::vector<pid_t> Stopped;
};

TEST_P(LivenessTest, AStoppedExecutorIsDeclaredDeadWithinTheLivenessTimeout) {
  SessionOptions O;
  O.LivenessTimeout = 1000ms;
  auto S = open(O);
  ASSERT_TRUE(S);
  stopConnection();
  Sleepy K(0);
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = launch(*S, K, Took);
  EXPECT_EQ(Kind, FailureKind::ExecutorLost) << "an executor that stopped answering is gone";
  expectDeclaredDead(*S, Msg, Took, "stopped answering");
  EXPECT_TRUE(K.Out.allZero()) << "a failed launch leaves its outputs zeroed";
}

TEST_P(LivenessTest, AKernelLongerThanTheLivenessTimeoutIsNeverCut) {
  SessionOptions O;
  O.LivenessTimeout = BusyLiveness;
  auto S = open(O);
  ASSERT_TRUE(S);
  Sleepy K(LongKernelMs);
  std::chrono::milliseconds Took;
  ASSERT_EQ(launch(*S, K, Took).Message, "");
  int64_t Back = 0;
  std::memcpy(&Back, K.Out.aligned(), 8);
  EXPECT_EQ(Back, LongKernelMs);
  std::free(K.Out.allocated());
  EXPECT_TRUE(S->connected());
}

TEST_P(LivenessTest, AnIdleSessionOutlivesTheLivenessTimeout) {
  SessionOptions O;
  O.LivenessTimeout = 300ms;
  auto S = open(O);
  ASSERT_TRUE(S);
  // Idle for three timeouts: the time passing is what is tested, not a
  // condition to wait for.
  std::this_thread::sleep_for(900ms);
  Sleepy K(1);
  std::chrono::milliseconds Took;
  EXPECT_EQ(launch(*S, K, Took).Message, "");
  std::free(K.Out.allocated());
}

// The kernel cannot be interrupted: the host closes the connection, and the
// connection process, seeing its host gone, ends itself.
TEST_P(LivenessTest, ALaunchPastItsDeadlineFailsAndEndsItsConnectionProcess) {
  SessionOptions O;
  O.LaunchTimeout = 300ms;
  auto S = open(O);
  ASSERT_TRUE(S);
  Sleepy K(20000);
  std::chrono::milliseconds Took;
  auto [Kind, Msg] = launch(*S, K, Took);
  EXPECT_EQ(Kind, FailureKind::Timeout);
  EXPECT_TRUE(mentions(Msg, "did not finish within 300 ms")) << Msg;
  EXPECT_GE(Took, 250ms);
  EXPECT_LT(Took, hangBound(300ms));
  EXPECT_TRUE(K.Out.allZero());
  EXPECT_FALSE(S->connected());
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, 5s)) << "the connection process outlived its host";
}

// Stopped while the host still sends a launch's input, far more than the
// socket buffers hold: the host's send can move nothing, and nothing comes
// back either (no reply is due yet). The launch fails within the liveness
// timeout, and the quarter of it at which a stalled send looks again.
// Zerocopy only: once its slab fits, a launch starts with its input, while
// the other strategies start with a round trip, and a stop lands in its
// reply (the test above). Over TCP: in shared memory the input is no send.
class LivenessSendTest : public LivenessTest {};

TEST_P(LivenessSendTest, AStoppedExecutorIsDeclaredDeadWhileTheHostSends) {
  SessionOptions O;
  O.LivenessTimeout = 1000ms;
  O.Transport = TransportKind::Tcp;
  auto S = openWithConcat(Exec.address(), GetParam(), O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(3);
  auto Ins = byteInputs({64 << 20}, Rng);
  ASSERT_TRUE(concatMatches(*S, Ins)) << "the slab fits the input from now on";
  stopConnection();
  auto Start = Clock::now();
  auto R = concatMatches(*S, Ins);
  auto Took = Clock::now() - Start;
  ASSERT_FALSE(R);
  expectDeclaredDead(*S, R.message(), Took,
                     "the executor stopped answering: it took none of the bytes");
}

// A zerocopy kernel runs on the executor's reader thread, so a large
// message another thread sends meanwhile stalls until the kernel is done,
// for longer than the liveness timeout. The heartbeats the executor sends
// for the launch tell the stalled sender that it is alive: neither call is
// cut.
TEST_P(LivenessSendTest, ASendStalledBehindALongKernelIsNotCut) {
  SessionOptions O;
  O.LivenessTimeout = BusyLiveness;
  auto S = open(O);
  ASSERT_TRUE(S);
  auto Dir =
      std::filesystem::path(::testing::TempDir()) / ("liveness-" + std::to_string(::getpid()));
  std::filesystem::remove_all(Dir);
  ASSERT_TRUE(std::filesystem::create_directory(Dir));
  std::string Flag = (Dir / "started").string();
  std::string Asset = (Dir / "weights.bin").string();
  {
    std::ofstream Out(Asset, std::ios::binary);
    Out << std::string(64 << 20, 'w'); // more than both ends' socket buffers hold
  }
  Sleepy K(LongKernelMs);
  auto FlagArg = makeDenseInput({int64_t(Flag.size() + 1)}, 1, Flag.c_str());
  std::string LaunchMsg;
  std::thread Launch([&] {
    MemrefArg In{K.In.data(), 1, 8}, Name{FlagArg->D.data(), 1, 1}, Out{K.Out.data(), 1, 8};
    LaunchMsg = messageOf(S->launch({remoteEntry("sleepy_flag"), "sleepy.o", {In, Name}, {Out}}));
  });
  auto Deadline = Clock::now() + paced(10s);
  while (!std::filesystem::exists(Flag) && Clock::now() < Deadline)
    std::this_thread::sleep_for(5ms);
  bool Started = std::filesystem::exists(Flag);
  std::string SendMsg = messageOf(S->sendBinary(Asset, BinaryFormat::Asset));
  Launch.join();
  std::filesystem::remove_all(Dir);
  ASSERT_TRUE(Started) << "the kernel did not start within 10 s: " << LaunchMsg;
  EXPECT_EQ(SendMsg, "");
  EXPECT_EQ(LaunchMsg, "");
  EXPECT_TRUE(S->connected());
  std::free(K.Out.allocated());
}

INSTANTIATE_TEST_SUITE_P(Sending, LivenessSendTest, ::testing::Values(Strategy::ZeroCopy),
                         [](const auto &Info) { return strategyTestName(Info.param); });

INSTANTIATE_TEST_SUITE_P(AllStrategies, LivenessTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive),
                         [](const auto &Info) { return strategyTestName(Info.param); });

} // namespace
