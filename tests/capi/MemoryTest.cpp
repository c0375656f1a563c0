//===- MemoryTest.cpp - Launches leave no memory behind -------------------===//
//
// Launches, successful and failed, must leave neither side holding memory:
// not the host (this process) and not the executor's connection process.
// Each test runs the same round of launches many times and compares
// resident memory after a warm-up (when allocators have reached their
// working set) with resident memory after ten times as many rounds. A
// round has the failures a session meets as well as a launch that works:
//  - a launch the host refuses before sending anything (a bad descriptor),
//  - a launch whose output the host cannot allocate (the executor ran the
//    kernel and sent the output, which the host must drop),
//  - a launch whose kernel returns an output the launch refuses (the
//    kernel's buffer must still be freed in the connection process).
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Procfs.h"

#include <unistd.h>

using namespace catalyst::remote::test;

namespace {

constexpr int64_t MiB = 1 << 20;

// The failed launches of a round.
enum Failure : unsigned {
  BadDescriptor = 1,
  RefusedByHost = 2,
  RefusedByExecutor = 4,
  AllFailures = 7,
};

// The host's output allocator: malloc, or nothing while Refuse is set.
bool Refuse = false;
void *refusingAlloc(size_t Bytes) {
  return Refuse ? nullptr : std::malloc(Bytes);
}

class MemoryTest : public ModeTest {
protected:
  void SetUp() override {
#ifdef CATALYST_REMOTE_SANITIZED
    // Resident memory is what these tests measure, and a sanitizer's
    // shadow memory and quarantine of freed blocks make it grow by design.
    GTEST_SKIP() << "resident memory is not comparable under a sanitizer";
#endif
    Refuse = false;
    __catalyst__remote__set_output_allocator(&refusingAlloc, &std::free);
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    ASSERT_NO_FATAL_FAILURE(sendKernel("bad_output"));
    std::vector<pid_t> Pids;
    ASSERT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
    Connection = Pids[0];
  }
  void TearDown() override {
    ModeTest::TearDown();
    Refuse = false;
    __catalyst__remote__set_output_allocator(nullptr, nullptr);
  }

  // One round on In (one-dimensional bytes): a launch that works, checked
  // byte for byte every Check-th round, and the failures in Failures.
  void round(Input &In, int I, int Check, unsigned Failures) {
    // The log keeps every failure: forget those of earlier rounds, so that
    // only the launches' own memory is measured.
    FailureLog::install();
    {
      Outputs Out({{1, 1}});
      ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("map_r1_e1"), "map.o", {&In.D}, Out))
          << "round " << I << ": " << FailureLog::last();
      ASSERT_EQ(Out[0].numElements(), In.D.size(0));
    }
    if (I % Check == 0) {
      ASSERT_TRUE(checkLaunch(Session.get(), "map", "map_r1_e1", {&In.D}, {{1, 1}}));
    }
    if (Failures & BadDescriptor) {
      Desc Bad = In.D;
      Bad.setSize(0, -1);
      Outputs Out({{1, 1}});
      ASSERT_FALSE(launchRemote(Session.get(), remoteEntry("map_r1_e1"), "map.o", {&Bad}, Out))
          << "round " << I << ": a negative size was accepted";
    }
    if (Failures & RefusedByHost) {
      Refuse = true;
      Outputs Out({{1, 1}});
      bool Launched = launchRemote(Session.get(), remoteEntry("map_r1_e1"), "map.o", {&In.D}, Out);
      Refuse = false;
      ASSERT_FALSE(Launched) << "round " << I << ": launched without an output buffer";
      ASSERT_NE(FailureLog::last().find("cannot allocate"), std::string::npos)
          << FailureLog::last();
    }
    if (Failures & RefusedByExecutor) {
      Outputs Out({{1, 1}, {1, 1}});
      ASSERT_FALSE(
          launchRemote(Session.get(), remoteEntry("bad_output"), "bad_output.o", {&In.D}, Out))
          << "round " << I << ": a negative output size was accepted";
      ASSERT_NE(FailureLog::last().find("output 1"), std::string::npos) << FailureLog::last();
    }
  }

  // Resident memory of both sides, in KiB.
  struct Resident {
    int64_t Host, Executor;
  };
  Resident resident() const {
    return {residentKiB(::getpid()), residentKiB(Connection)};
  }

  // Runs Warm rounds, then 10 * Warm more, and expects neither side to
  // grow by MarginKiB or more over the latter.
  void expectFlat(Input &In, int Warm, int Check, int64_t MarginKiB, unsigned Failures) {
    for (int I = 0; I < Warm; ++I)
      ASSERT_NO_FATAL_FAILURE(round(In, I, Check, Failures));
    Resident Before = resident();
    ASSERT_GT(Before.Executor, 0) << "cannot read /proc/" << Connection << "/status";
    for (int I = 0; I < 10 * Warm; ++I)
      ASSERT_NO_FATAL_FAILURE(round(In, I, Check, Failures));
    Resident After = resident();
    EXPECT_LT(After.Executor - Before.Executor, MarginKiB)
        << "executor connection RSS went from " << Before.Executor << " KiB to " << After.Executor
        << " KiB over " << 10 * Warm << " rounds";
    EXPECT_LT(After.Host - Before.Host, MarginKiB)
        << "host RSS went from " << Before.Host << " KiB to " << After.Host << " KiB over "
        << 10 * Warm << " rounds";
  }

  pid_t Connection = -1;
};

// Rounds of small launches before measuring (ten times as many are
// measured): as many as take a second or two. Naive launches make 14 round
// trips each, batched ones 3.
int warmRounds(Mode M) {
  switch (overTcp(M)) {
  case Mode::ZeroCopy:
    return 1000;
  case Mode::Batched:
    return 300;
  default:
    return 60;
  }
}

// Rounds of 1 MiB each way: keeping a copy of the payload on either side
// would add 1 MiB per launch, a leak of 100 MiB or more over the rounds
// measured. The executor keeps freed memory for reuse (Retention.h), and
// its worker threads each have a heap that frees another thread's blocks
// lazily, so a batched or naive connection steps up by 1 MiB blocks now and
// then until every heap holds its few: 3-8 MiB in all, flat from then on
// over 600 rounds. The margin sits well above those steps and well below
// a leak of a quarter of the payload per launch; smaller leaks are the
// small launches' test's to catch.
TEST_P(MemoryTest, LargeLaunchesLeaveNothingBehind) {
  std::mt19937_64 Rng(11);
  auto In = makeInput(Layout::Dense, {MiB}, 1, Rng);
  expectFlat(*In, 10, 25, 20 * 1024, AllFailures);
}

// Rounds of a few hundred bytes, thousands of them (hundreds with naive
// launches): whatever a launch keeps besides the payload (a plan, a
// message, a descriptor, an error text) adds up. Both sides stay within a
// few KiB here; a leak of 20 bytes per round with zero-copy launches, 70
// with batched and 330 with naive ones crosses the margin.
TEST_P(MemoryTest, SmallLaunchesLeaveNothingBehind) {
  std::mt19937_64 Rng(12);
  auto In = makeInput(Layout::Dense, {256}, 1, Rng);
  expectFlat(*In, warmRounds(GetParam()), 100, 192, AllFailures);
}

// The control: a kernel that leaks 1 MiB per launch must show, so the probe
// above reads the process that runs the kernels.
TEST_P(MemoryTest, ProbeSeesALeakingKernel) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("leak"));
  int64_t Before = residentKiB(Connection);
  Outputs None({});
  for (int I = 0; I < 100; ++I)
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("leak"), "leak.o", {}, None))
        << FailureLog::last();
  EXPECT_GT(residentKiB(Connection) - Before, 80 * 1024);
}

INSTANTIATE_TEST_SUITE_P(AllModes, MemoryTest, ::testing::ValuesIn(AllModes), modeTestName);

} // namespace
