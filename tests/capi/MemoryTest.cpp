//===- MemoryTest.cpp - Launches leave no memory behind -------------------===//
//
// 1,000 launches moving 1 MiB in and 1 MiB out each: if either side kept a
// copy per launch, resident memory would grow by gigabytes. Measured after
// 100 launches (when allocators have warmed up) and after 1,000.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Procfs.h"

#include <unistd.h>

using namespace catalyst::remote::test;

namespace {

constexpr int64_t MiB = 1 << 20;
// Growth allowed between the two measurements: allocator slack, not leaks.
// The executor runs kernels on several worker threads, each with its own
// glibc arena, and each arena may keep about 2 MiB of freed 1 MiB blocks, so
// a one-time step of a few MiB is normal. Leaking the payload would add
// 900 MiB; leaking even 1% of it, 9 MiB.
constexpr int64_t ExecutorMarginKiB = 8 * 1024;
constexpr int64_t HostMarginKiB = 8 * 1024;

class MemoryTest : public ModeTest {
protected:
  void SetUp() override {
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    std::vector<pid_t> Pids;
    ASSERT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
    Connection = Pids[0];
    std::mt19937_64 Rng(11);
    In = makeInput(Layout::Dense, {MiB}, 1, Rng);
  }

  // Runs N launches, checking a sample of them byte for byte.
  void launches(int N) {
    for (int I = 0; I < N; ++I) {
      Outputs Out({{1, 1}});
      ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("map_r1_e1"), "map.o", {&In->D}, Out))
          << "launch " << I << ": " << FailureLog::last();
      ASSERT_EQ(Out[0].numElements(), MiB);
      if (I % 100 == 0) {
        ASSERT_TRUE(checkLaunch(Session.get(), "map", "map_r1_e1", {&In->D}, {{1, 1}}));
      }
    }
  }

  pid_t Connection = -1;
  std::unique_ptr<Input> In;
};

TEST_P(MemoryTest, ResidentMemoryStaysFlatOverAThousandLaunches) {
  ASSERT_NO_FATAL_FAILURE(launches(100));
  int64_t Executor100 = residentKiB(Connection), Host100 = residentKiB(::getpid());
  ASSERT_GT(Executor100, 0) << "cannot read /proc/" << Connection << "/status";
  ASSERT_NO_FATAL_FAILURE(launches(900));
  int64_t Executor1000 = residentKiB(Connection), Host1000 = residentKiB(::getpid());
  EXPECT_LT(Executor1000 - Executor100, ExecutorMarginKiB)
      << "executor connection RSS went from " << Executor100 << " KiB to " << Executor1000
      << " KiB";
  EXPECT_LT(Host1000 - Host100, HostMarginKiB)
      << "host RSS went from " << Host100 << " KiB to " << Host1000 << " KiB";
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
