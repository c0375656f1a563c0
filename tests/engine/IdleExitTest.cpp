//===- IdleExitTest.cpp - An executor that stops once nobody uses it ------===//
//
// With --idle-exit S an executor started for a job stops by itself once no
// session has been open for S seconds, as on a stop signal: its
// announcement goes too. A session open all along keeps it.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Pace.h"
#include "Procfs.h"
#include "TempDir.h"
#include "Text.h"

#include <sys/stat.h>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

TEST(IdleExitTest, AnIdleExecutorStopsAndWithdrawsItsAnnouncement) {
  TempDir Dir;
  ExecutorOptions EO;
  EO.Bind = "0";
  EO.Args = {"--idle-exit", "0.5", "--announce", Dir.dir()};
  EO.Env = {"SLURM_JOB_ID=9", "SLURM_STEP_ID=0", "SLURM_PROCID=1"};
  EO.LogPath = Dir.path("executor.log");
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  struct stat St;
  ASSERT_EQ(::stat(Dir.path("9.0.1.addr").c_str(), &St), 0);
  EXPECT_TRUE(waitUntilExited(Exec.pid(), paced(5s))) << "still running after 5 s idle";
  EXPECT_NE(::stat(Dir.path("9.0.1.addr").c_str(), &St), 0) << "announcement left behind";
  EXPECT_TRUE(mentions(readFile(EO.LogPath), "(--idle-exit): stopping")) << readFile(EO.LogPath);
}

TEST(IdleExitTest, AnOpenSessionKeepsItRunning) {
  ExecutorOptions EO;
  EO.Bind = "0";
  EO.Args = {"--idle-exit", "0.3"};
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  EXPECT_FALSE(waitUntilExited(Exec.pid(), 1200ms)) << "stopped with a session open";
  std::mt19937_64 Rng(2);
  EXPECT_TRUE(concatMatches(*S, byteInputs({10, 20}, Rng)));
  S.reset();
  EXPECT_TRUE(waitUntilExited(Exec.pid(), paced(5s))) << "still running after the session ended";
}

} // namespace
