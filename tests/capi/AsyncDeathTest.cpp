//===- AsyncDeathTest.cpp - Kernels that die in asynchronous launches -----===//
//
// A kernel that kills its connection process during a launch queued with
// __catalyst__remote__launch_async_memrefs is reported as the synchronous
// path reports it, only at await(): through the failure handler, naming the
// signal or the exit status, the outputs zeroed. A launch queued behind it
// fails cleanly at its own await, nothing waits for ever, the session is
// closed, and the same address opens a new one that works.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Deaths.h"
#include "Pace.h"
#include "Text.h"

using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

// One death the dying process reports itself, one only its listener can.
constexpr Death Reported = Deaths[0], Unreported = Deaths[7];

class AsyncDeathTest : public CapiTest,
                       public ::testing::WithParamInterface<std::tuple<Mode, Death>> {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(std::get<0>(GetParam())));
    ASSERT_NO_FATAL_FAILURE(sendKernel("deaths"));
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  }

  // Awaits Token, which must fail once through the handler; returns what
  // it said.
  std::string failedAwait(int64_t Token) {
    size_t Before = FailureLog::count();
    __catalyst__remote__await(Token);
    EXPECT_EQ(FailureLog::count(), Before + 1) << "await " << Token << " reported no failure";
    return FailureLog::last();
  }

  // The dead session refuses work; the address opens a new one that works.
  void expectANewSessionWorks() {
    std::mt19937_64 Rng(4);
    auto In = makeInput(Layout::Dense, {5}, 4, Rng);
    Outputs Refused({{1, 4}});
    EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("map_r1_e4"), "map.o", {&In->D}, Refused));
    int64_t H = __catalyst__remote__open(Exec.address().c_str());
    ASSERT_GT(H, 0) << FailureLog::last();
    EXPECT_NE(H, Session.get());
    Session.reset(H);
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    EXPECT_TRUE(checkLaunch(Session.get(), "map", "map_r1_e4", {&In->D}, {{1, 4}}));
  }
};

TEST_P(AsyncDeathTest, AwaitReportsTheDeathAndZeroesTheOutputs) {
  Death D = std::get<1>(GetParam());
  Outputs Out({{1, 1}});
  Out[0].poison();
  auto Start = Clock::now();
  int64_t Token = launchRemoteAsync(Session.get(), remoteEntry(D.Entry), "deaths.o", {}, Out);
  ASSERT_GT(Token, 0) << FailureLog::last();
  std::string Msg = failedAwait(Token);
  EXPECT_LT(Clock::now() - Start, paced(std::chrono::seconds(5)));
  EXPECT_TRUE(mentions(Msg, D.Named)) << Msg;
  EXPECT_TRUE(mentions(Msg, Exec.address())) << Msg;
  EXPECT_TRUE(Out[0].allZero()) << "a failed launch must zero its output descriptors";
  expectANewSessionWorks();
}

// The dying launch waits behind a sleepy one, and a map launch behind it,
// so that the map launch is surely still queued when the kernel dies.
TEST_P(AsyncDeathTest, ALaunchQueuedBehindTheDeathFailsCleanly) {
  Death D = std::get<1>(GetParam());
  ASSERT_NO_FATAL_FAILURE(sendKernel("sleepy"));
  auto Ms = makeDenseInput<int64_t>({1}, std::vector<int64_t>{300});
  std::mt19937_64 Rng(8);
  auto In = makeInput(Layout::Dense, {6}, 4, Rng);
  // Poisoned: the C ABI zeroes them as it queues, and a failure must leave
  // them so.
  Outputs Slept({{1, 8}}), Died({{1, 1}}), Queued({{1, 4}});
  Died[0].poison();
  Queued[0].poison();
  auto Start = Clock::now();
  int64_t First =
      launchRemoteAsync(Session.get(), remoteEntry("sleepy"), "sleepy.o", {&Ms->D}, Slept);
  int64_t Dying = launchRemoteAsync(Session.get(), remoteEntry(D.Entry), "deaths.o", {}, Died);
  int64_t Behind =
      launchRemoteAsync(Session.get(), remoteEntry("map_r1_e4"), "map.o", {&In->D}, Queued);
  ASSERT_TRUE(First > 0 && Dying > 0 && Behind > 0) << FailureLog::last();

  size_t Before = FailureLog::count();
  __catalyst__remote__await(First);
  EXPECT_EQ(FailureLog::count(), Before) << "the launch before the death: " << FailureLog::last();
  std::string DiedMsg = failedAwait(Dying);
  std::string BehindMsg = failedAwait(Behind);
  EXPECT_LT(Clock::now() - Start, paced(std::chrono::seconds(5)));
  EXPECT_TRUE(mentions(DiedMsg, D.Named)) << DiedMsg;
  EXPECT_TRUE(mentions(BehindMsg, "map_r1_e4")) << BehindMsg;
  EXPECT_TRUE(mentions(BehindMsg, Exec.address())) << BehindMsg;
  EXPECT_TRUE(mentions(BehindMsg, "is closed since its connection closed")) << BehindMsg;
  EXPECT_TRUE(mentions(BehindMsg, D.Named)) << "should say why: " << BehindMsg;
  EXPECT_TRUE(Died[0].allZero());
  EXPECT_TRUE(Queued[0].allZero()) << "the queued launch must zero its output descriptors";
  expectANewSessionWorks();
}

INSTANTIATE_TEST_SUITE_P(AllModes, AsyncDeathTest,
                         ::testing::Combine(::testing::ValuesIn(AllModes),
                                            ::testing::Values(Reported, Unreported)),
                         [](const auto &Info) {
                           return std::string(modeName(std::get<0>(Info.param))) + "_" +
                                  std::get<1>(Info.param).Entry;
                         });

} // namespace
