//===- FailureTest.cpp - Launches that must fail, and say why -------------===//

#include "CapiHarness.h"
#include "Pace.h"
#include "Text.h"

#include <thread>

using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

class FailureTest : public ModeTest {
protected:
  void SetUp() override {
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  }

  // Launches map_r1_e4 on In, expecting a failure that leaves the output
  // descriptor zeroed; returns the message.
  std::string failedLaunch(const std::string &Entry, const std::string &Object,
                           const InputList &Inputs) {
    Outputs Out({{1, 4}});
    Out[0].poison();
    EXPECT_FALSE(launchRemote(Session.get(), Entry, Object, Inputs, Out));
    EXPECT_TRUE(Out[0].allZero()) << "a failed launch must zero its output descriptors";
    EXPECT_EQ(std::string(__catalyst__remote__last_error()), FailureLog::last());
    return FailureLog::last();
  }

  // The session still launches correctly after a failure.
  void expectStillWorks() {
    std::mt19937_64 Rng(5);
    auto In = makeInput(Layout::Dense, {6}, 4, Rng);
    EXPECT_TRUE(checkLaunch(Session.get(), "map", "map_r1_e4", {&In->D}, {{1, 4}}));
  }
};

TEST_P(FailureTest, MissingEntryNamesTheSymbol) {
  std::mt19937_64 Rng(1);
  auto In = makeInput(Layout::Dense, {3}, 4, Rng);
  std::string Msg = failedLaunch("_catalyst_pyface_not_there", "map.o", {&In->D});
  EXPECT_TRUE(mentions(Msg, "_catalyst_pyface_not_there")) << Msg;
  expectStillWorks();
}

TEST_P(FailureTest, ObjectNotSentNamesTheObject) {
  std::mt19937_64 Rng(1);
  auto In = makeInput(Layout::Dense, {3}, 4, Rng);
  std::string Msg = failedLaunch(remoteEntry("map_r1_e4"), "never_sent.o", {&In->D});
  EXPECT_TRUE(mentions(Msg, "never_sent.o")) << Msg;
  expectStillWorks();
}

TEST_P(FailureTest, NullDataWithElementsNamesTheInput) {
  std::mt19937_64 Rng(1);
  auto Good = makeInput(Layout::Dense, {3}, 4, Rng);
  Desc Bad(1, 4);
  Bad.setSize(0, 4);
  Bad.setStride(0, 1);
  // Two inputs, so the message must say which.
  Outputs Out({{1, 4}});
  Out[0].poison();
  EXPECT_FALSE(
      launchRemote(Session.get(), remoteEntry("map_r1_e4"), "map.o", {&Good->D, &Bad}, Out));
  EXPECT_TRUE(Out[0].allZero());
  EXPECT_TRUE(mentions(FailureLog::last(), "input 1")) << FailureLog::last();
  expectStillWorks();
}

TEST_P(FailureTest, NullDescriptorNamesTheInput) {
  Outputs Out({{1, 4}});
  void *InDescs[] = {nullptr};
  size_t Ranks[] = {1}, Sizes[] = {4};
  auto OutDescs = Out.descs();
  auto OutRanks = Out.ranks();
  auto OutSizes = Out.elemSizes();
  size_t Before = FailureLog::count();
  __catalyst__remote__launch(Session.get(), remoteEntry("map_r1_e4").c_str(), "map.o", 1, InDescs,
                             Ranks, Sizes, 1, OutDescs.data(), OutRanks.data(), OutSizes.data());
  EXPECT_EQ(FailureLog::count(), Before + 1);
  EXPECT_TRUE(mentions(FailureLog::last(), "input 0")) << FailureLog::last();
  expectStillWorks();
}

TEST_P(FailureTest, NegativeSizeIsRejected) {
  std::mt19937_64 Rng(1);
  auto In = makeInput(Layout::Dense, {3}, 4, Rng);
  In->D.setSize(0, -3);
  std::string Msg = failedLaunch(remoteEntry("map_r1_e4"), "map.o", {&In->D});
  EXPECT_TRUE(mentions(Msg, "input 0")) << Msg;
  expectStillWorks();
}

TEST_P(FailureTest, UnknownSessionHandle) {
  Outputs Out({{1, 4}});
  Out[0].poison();
  EXPECT_FALSE(launchRemote(Session.get() + 1000, remoteEntry("map_r1_e4"), "map.o", {}, Out));
  EXPECT_TRUE(Out[0].allZero());
  EXPECT_TRUE(mentions(FailureLog::last(), std::to_string(Session.get() + 1000)))
      << FailureLog::last();
}

TEST_P(FailureTest, CrashingKernelFailsTheLaunchAndTheExecutorServesOn) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("crash"));
  auto Start = Clock::now();
  std::string Msg = failedLaunch(remoteEntry("crash"), "crash.o", {});
  auto Took = Clock::now() - Start;
  EXPECT_LT(Took, paced(std::chrono::seconds(5))) << "the host noticed the crash late";
  EXPECT_TRUE(mentions(Msg, "crash")) << Msg;
  EXPECT_TRUE(mentions(Msg, Exec.address())) << "should say which executor went away: " << Msg;
  // The dead session refuses further work with an error, not a hang.
  std::mt19937_64 Rng(2);
  auto In = makeInput(Layout::Dense, {3}, 4, Rng);
  failedLaunch(remoteEntry("map_r1_e4"), "map.o", {&In->D});

  // The same address opens a new, working session.
  int64_t H = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << FailureLog::last();
  EXPECT_NE(H, Session.get());
  Session.reset(H);
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  expectStillWorks();
}

INSTANTIATE_TEST_SUITE_P(AllModes, FailureTest, ::testing::ValuesIn(AllModes), modeTestName);

} // namespace
