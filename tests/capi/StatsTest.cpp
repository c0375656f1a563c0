//===- StatsTest.cpp - Strategy choice and launch counters ----------------===//
//
// Which strategy a session ends up with, and the round trips each strategy
// promises: zerocopy one per launch, batched at most three, the upstream
// protocol one per buffer step.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"

using namespace catalyst::remote::test;

namespace {

constexpr int64_t Elements = 64 * 1024;

class StatsTest : public ModeTest {
protected:
  void SetUp() override {
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    std::mt19937_64 Rng(4);
    In = makeInput(Layout::Dense, {Elements}, 1, Rng);
  }

  catalyst_remote_stats stats() { return statsOf(Session.get()); }

  void launch() { ASSERT_TRUE(checkLaunch(Session.get(), "map", "map_r1_e1", {&In->D}, {{1, 1}})); }

  std::unique_ptr<Input> In;
};

TEST_P(StatsTest, CountsEachLaunch) {
  EXPECT_EQ(stats().launches, 0u);
  ASSERT_NO_FATAL_FAILURE(launch());
  auto One = stats();
  EXPECT_EQ(One.launches, 1u);
  EXPECT_STREQ(One.strategy, expectedStrategy(GetParam()));
  EXPECT_STREQ(One.transport, expectedTransport(GetParam()));
  if (GetParam() == Mode::ZeroCopyShm) {
    // The payloads went through shared memory, the host copying each once.
    EXPECT_LT(One.last.bytes_sent + One.last.bytes_received, uint64_t(Elements));
    EXPECT_EQ(One.last.host_copy_bytes, 2 * uint64_t(Elements));
  } else {
    // The input and output payloads crossed the wire.
    EXPECT_GE(One.last.bytes_sent, uint64_t(Elements));
    EXPECT_GE(One.last.bytes_received, uint64_t(Elements));
  }
  EXPECT_GE(One.last.messages, 2 * One.last.round_trips);
  ASSERT_NO_FATAL_FAILURE(launch());
  auto Two = stats();
  EXPECT_EQ(Two.launches, 2u);
  EXPECT_EQ(Two.total.round_trips, One.last.round_trips + Two.last.round_trips);
  EXPECT_EQ(Two.total.bytes_sent, One.last.bytes_sent + Two.last.bytes_sent);
}

TEST_P(StatsTest, RoundTripsPerLaunch) {
  ASSERT_NO_FATAL_FAILURE(launch());
  ASSERT_NO_FATAL_FAILURE(launch());
  uint64_t Trips = stats().last.round_trips;
  switch (overTcp(GetParam())) {
  case Mode::ZeroCopy:
    EXPECT_EQ(Trips, 1u);
    break;
  case Mode::Batched:
    EXPECT_GE(Trips, 1u);
    EXPECT_LE(Trips, 3u);
    break;
  default:
    // Allocations, writes, the invoke, reads and frees, one at a time.
    EXPECT_GT(Trips, 3u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, StatsTest, ::testing::ValuesIn(AllModes), modeTestName);

class StrategyChoiceTest : public CapiTest {};

TEST_F(StrategyChoiceTest, DefaultIsZeroCopy) {
  ScopedEnv Unset("CATALYST_REMOTE_STRATEGY", nullptr);
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  EXPECT_EQ(strategyOf(Session.get()), "zerocopy");
}

TEST_F(StrategyChoiceTest, AskingForMoreThanAnUpstreamExecutorOffersFallsBack) {
  for (const char *Ask : {"zerocopy", "batched", "auto"}) {
    SCOPED_TRACE(Ask);
    ExecutorProcess Upstream;
    ASSERT_TRUE(Upstream.start({/*UpstreamOnly=*/true, {}, {}}));
    ScopedEnv Env("CATALYST_REMOTE_STRATEGY", Ask);
    ScopedSession S(__catalyst__remote__open(Upstream.address().c_str()));
    ASSERT_GT(S.get(), 0) << FailureLog::last();
    EXPECT_EQ(strategyOf(S.get()), "naive");
  }
}

TEST_F(StrategyChoiceTest, UnknownStrategyNameFailsOpen) {
  ASSERT_TRUE(Exec.start());
  ScopedEnv Env("CATALYST_REMOTE_STRATEGY", "warp-drive");
  EXPECT_EQ(__catalyst__remote__open(Exec.address().c_str()), 0);
  EXPECT_NE(FailureLog::last().find("warp-drive"), std::string::npos) << FailureLog::last();
}

// An executor on this machine offers its local socket; auto takes it.
TEST_F(StrategyChoiceTest, DefaultTransportIsSharedMemoryOnThisMachine) {
  ScopedEnv Unset("CATALYST_REMOTE_TRANSPORT", nullptr);
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  EXPECT_EQ(transportOf(Session.get()), "local");
}

TEST_F(StrategyChoiceTest, TcpWhenAskedFor) {
  ScopedEnv Tcp("CATALYST_REMOTE_TRANSPORT", "tcp");
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  EXPECT_EQ(transportOf(Session.get()), "tcp");
}

// Auto takes TCP from an executor that offers nothing else, silently;
// local fails saying why, and so does shm, the name it had before 0.1.0.
TEST_F(StrategyChoiceTest, SharedMemoryFromAnExecutorWithoutItFailsClearly) {
  ExecutorOptions NoShm;
  NoShm.Args = {"--no-shared-memory"};
  ASSERT_TRUE(Exec.start(NoShm));
  {
    ScopedEnv Auto("CATALYST_REMOTE_TRANSPORT", "auto");
    ScopedSession S(__catalyst__remote__open(Exec.address().c_str()));
    ASSERT_GT(S.get(), 0) << FailureLog::last();
    EXPECT_EQ(transportOf(S.get()), "tcp");
  }
  for (const char *Name : {"local", "shm"}) {
    SCOPED_TRACE(Name);
    ScopedEnv Local("CATALYST_REMOTE_TRANSPORT", Name);
    size_t Before = FailureLog::count();
    EXPECT_EQ(__catalyst__remote__open(Exec.address().c_str()), 0);
    EXPECT_EQ(FailureLog::count(), Before + 1);
    EXPECT_NE(FailureLog::last().find("through its local socket (transport local)"),
              std::string::npos)
        << FailureLog::last();
    EXPECT_NE(FailureLog::last().find("offers no local socket"), std::string::npos)
        << FailureLog::last();
  }
}

TEST_F(StrategyChoiceTest, UnknownTransportNameFailsOpen) {
  ASSERT_TRUE(Exec.start());
  ScopedEnv Env("CATALYST_REMOTE_TRANSPORT", "carrier-pigeon");
  EXPECT_EQ(__catalyst__remote__open(Exec.address().c_str()), 0);
  EXPECT_NE(FailureLog::last().find("carrier-pigeon"), std::string::npos) << FailureLog::last();
}

TEST_F(StrategyChoiceTest, StatsOfAnUnknownSessionFail) {
  catalyst_remote_stats S{};
  size_t Before = FailureLog::count();
  EXPECT_EQ(__catalyst__remote__stats(987654, &S), -1);
  EXPECT_EQ(FailureLog::count(), Before + 1);
}

} // namespace
