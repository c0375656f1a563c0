//===- KernelDeathTest.cpp - Every way a kernel can die is named ----------===//
//
// A kernel that dies takes its connection process with it, whichever thread
// runs it (the reader thread under zerocopy, a worker under batched and
// naive). The host's error names the signal or the exit status, at once; the
// executor goes on serving new sessions.
//
//===----------------------------------------------------------------------===//

#include "Deaths.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "Text.h"

#include <csignal>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

class KernelDeathTest : public ::testing::TestWithParam<std::tuple<Strategy, Death>> {};

TEST_P(KernelDeathTest, TheHostsErrorNamesTheSignal) {
  auto [S, D] = GetParam();
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Strategy = S;
  auto Sess = openSession(Exec.address(), O);
  ASSERT_TRUE(Sess);
  ASSERT_EQ(Sess->transport(), testTransport());
  ASSERT_EQ(messageOf(Sess->sendBinary(kernelObject("deaths"), BinaryFormat::Object)), "");
  Desc Out(1, 1);
  Out.poison();
  auto Start = std::chrono::steady_clock::now();
  auto [Kind, Msg] =
      failureOf(Sess->launch({remoteEntry(D.Entry), "deaths.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_LT(std::chrono::steady_clock::now() - Start, paced(5s));
  EXPECT_NE(Msg.find(D.Named), std::string::npos) << Msg;
  // A signal is named by the process's crash reporter, a crash; a kernel
  // that exits takes the process with it, as any end of the executor would.
  bool Signal = mentions(D.Named, "signal");
  EXPECT_EQ(Kind, Signal ? FailureKind::KernelCrashed : FailureKind::ExecutorLost) << Msg;
  auto [After, Closed] = failureOf(Sess->ping());
  EXPECT_EQ(After, FailureKind::ExecutorLost) << "a call after the end finds the executor gone";
  EXPECT_TRUE(mentions(Closed, "is closed since its connection closed")) << Closed;
  EXPECT_TRUE(Out.allZero());
  EXPECT_FALSE(Sess->connected());
  EXPECT_TRUE(openWithConcat(Exec.address(), S)) << "the executor serves on";
}

// Killed from outside (as the OOM killer does) between two launches: the
// process cannot say why, its listener does.
TEST(KernelDeathTest, AConnectionProcessKilledFromOutsideIsNamed) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  auto Sess = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(Sess);
  ASSERT_EQ(Sess->transport(), testTransport());
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, 5s));
  // Between launches: every thread of the process asleep, its last reply
  // all sent and counted (over a Unix socket only the process itself
  // counts what it wrote).
  ASSERT_TRUE(waitUntilAsleep(Pids[0], 5s));
  ::kill(Pids[0], SIGKILL);
  ASSERT_TRUE(Exec.waitForConnections(0, Pids, 5s));
  Desc Out(1, 1);
  auto [Kind, Msg] =
      failureOf(Sess->launch({remoteEntry("concat_0"), "concat.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(mentions(Msg, "was killed by signal 9 (Killed)")) << Msg;
  // Not a crash the process named: the executor's process is gone.
  EXPECT_EQ(Kind, FailureKind::ExecutorLost) << Msg;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, KernelDeathTest,
                         ::testing::Combine(::testing::Values(Strategy::ZeroCopy, Strategy::Batched,
                                                              Strategy::Naive),
                                            ::testing::ValuesIn(Deaths)),
                         [](const auto &Info) {
                           return std::string(strategyTestName(std::get<0>(Info.param))) + "_" +
                                  std::get<1>(Info.param).Entry;
                         });

} // namespace
