//===- ConcurrencyTest.cpp - Threads sharing sessions, and close racing them -===//
//
// A session's methods may be called from several threads at once, and
// close() from any thread at any time: a call in flight on another thread
// completes or fails saying the session is closed, nothing is used after it
// is freed (the sanitizer builds check that), and no thread is left
// waiting. Under every strategy.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "TempDir.h"
#include "Text.h"

#include <atomic>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

class ConcurrencyTest : public ::testing::TestWithParam<Strategy> {
protected:
  void SetUp() override {
    ExecutorOptions O;
    O.Plugins = {TEST_PLUGIN_PATH};
    ASSERT_TRUE(Exec.start(O));
  }

  std::unique_ptr<Session> open() {
    SessionOptions O;
    O.Strategy = GetParam();
    auto S = openSession(Exec.address(), O);
    if (S) {
      EXPECT_EQ(S->transport(), testTransport());
    }
    for (const char *K : {"concat", "sleepy"})
      if (S) {
        EXPECT_EQ(messageOf(S->sendBinary(kernelObject(K), BinaryFormat::Object)), "");
      }
    return S;
  }

  ExecutorProcess Exec;
};

// Counts how calls ended; an error that does not say the session is closed
// is a failure of the test.
struct Outcomes {
  std::atomic<int> Done{0}, Closed{0};
  std::mutex M;
  std::vector<std::string> Unexpected;

  void note(llvm::Error Err) {
    if (!Err) {
      ++Done;
      return;
    }
    std::string Msg = llvm::toString(std::move(Err));
    if (mentions(Msg, "closed")) {
      ++Closed;
      return;
    }
    std::lock_guard<std::mutex> Lock(M);
    Unexpected.push_back(Msg);
  }
};

// Launches, sends, wrapper calls and statistics on one session from five
// threads, until another thread closes it.
TEST_P(ConcurrencyTest, CloseRacesLaunchesSendsCallsAndStats) {
  auto S = open();
  ASSERT_TRUE(S);
  Outcomes Seen;
  std::atomic<bool> Stop{false};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 3; ++T)
    Threads.emplace_back([&, T] {
      std::mt19937_64 Rng(T);
      while (!Stop) {
        auto R = concatMatches(*S, byteInputs({int64_t(16 + T)}, Rng));
        Seen.note(R ? llvm::Error::success()
                    : llvm::createStringError(llvm::inconvertibleErrorCode(), R.message()));
      }
    });
  Threads.emplace_back([&] {
    char Arg[3] = {1, 2, 3};
    while (!Stop)
      Seen.note(S->callWrapper("test_plugin_echo_reverse", Arg).takeError());
  });
  Threads.emplace_back([&] {
    while (!Stop) {
      Seen.note(S->sendBinary(kernelObject("concat"), BinaryFormat::Object));
      (void)S->stats();
      (void)S->connected();
    }
  });
  // Some calls complete before the close, and some meet the closed session.
  bool Completed = waitUntil([&] { return Seen.Done > 0; }, paced(10000ms));
  EXPECT_EQ(messageOf(S->close()), "");
  EXPECT_FALSE(S->connected());
  bool MetClose = waitUntil([&] { return Seen.Closed > 0; }, paced(10000ms));
  Stop = true;
  for (auto &T : Threads)
    T.join();
  EXPECT_TRUE(Completed) << "no call completed within 10 s before the close";
  EXPECT_TRUE(MetClose) << "no call after the close failed saying so within 10 s";
  EXPECT_TRUE(Seen.Unexpected.empty()) << Seen.Unexpected.front();
}

// A long launch in flight on another thread does not hold close() up: the
// connection is closed under it, the launch fails saying why, and the
// executor's connection process, whose host is gone, ends.
TEST_P(ConcurrencyTest, CloseEndsALaunchInFlightOnAnotherThread) {
  auto S = open();
  ASSERT_TRUE(S);
  int64_t Ms = 20000;
  Desc In(1, 8), Out(1, 8);
  In.setAllocated(&Ms);
  In.setAligned(&Ms);
  In.setSize(0, 1);
  In.setStride(0, 1);
  // The kernel creates Flag once it runs: the close then surely finds the
  // launch in flight.
  TempDir Dir;
  std::string Flag = Dir.path("running");
  auto FlagArg = makeDenseInput({int64_t(Flag.size() + 1)}, 1, Flag.c_str());
  std::string Msg;
  std::thread Launcher([&] {
    MemrefArg A{In.data(), 1, 8}, Name{FlagArg->D.data(), 1, 1}, R{Out.data(), 1, 8};
    llvm::Error Err = S->launch({remoteEntry("sleepy_flag"), "sleepy.o", {A, Name}, {R}});
    Msg = Err ? llvm::toString(std::move(Err)) : "";
  });
  bool Running = waitUntil([&] { return ::access(Flag.c_str(), F_OK) == 0; }, paced(10000ms));
  auto Start = Clock::now();
  EXPECT_EQ(messageOf(S->close()), "");
  Launcher.join();
  ASSERT_TRUE(Running) << "the kernel did not start within 10 s: " << Msg;
  EXPECT_LT(Clock::now() - Start, paced(5s));
  EXPECT_TRUE(mentions(Msg, "the session was closed while a call was in flight")) << Msg;
  EXPECT_TRUE(Out.allZero());
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, paced(5000ms)));
}

// Four threads, each with sessions of its own, opening, launching and
// closing at once.
TEST_P(ConcurrencyTest, ThreadsOnSeparateSessionsOpenLaunchAndClose) {
  std::vector<std::thread> Threads;
  std::mutex M;
  std::vector<std::string> Failures;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      std::mt19937_64 Rng(100 + T);
      for (int Round = 0; Round < 8; ++Round) {
        auto S = open();
        auto Ran = S ? concatMatches(*S, byteInputs({64, int64_t(T + 1)}, Rng))
                     : ::testing::AssertionFailure() << "open failed";
        std::string Closed = S ? messageOf(S->close()) : "";
        std::lock_guard<std::mutex> Lock(M);
        if (!Ran)
          Failures.push_back(Ran.message());
        if (!Closed.empty())
          Failures.push_back(Closed);
      }
    });
  for (auto &T : Threads)
    T.join();
  EXPECT_TRUE(Failures.empty()) << Failures.front();
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, ConcurrencyTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive),
                         [](const auto &Info) { return strategyTestName(Info.param); });

} // namespace
