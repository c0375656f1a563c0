//===- AnnouncementTest.cpp - An executor says where it listens -----------===//
//
// Started as a cluster's launcher starts it, with --announce DIR, an
// executor writes DIR/<job>.<step>.<rank>.addr once it listens, holding an
// address a host can open a session with, and removes it when it stops.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Pace.h"
#include "Procfs.h"
#include "TempDir.h"
#include "Text.h"
#include "TokenFile.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

bool exists(const std::string &Path) {
  struct stat St;
  return ::lstat(Path.c_str(), &St) == 0;
}

std::string firstLine(const std::string &Text) {
  return Text.substr(0, Text.find('\n'));
}

// Slurm's step and rank name the file; its address opens a session; the
// file is gone once the executor has stopped.
TEST(AnnouncementTest, AnExecutorAnnouncesItsAddressAndWithdrawsIt) {
  TempDir Dir;
  ExecutorOptions EO;
  EO.Bind = "0";
  EO.Args = {"--announce", Dir.dir()};
  EO.Env = {"SLURM_JOB_ID=4711", "SLURM_STEP_ID=2", "SLURM_PROCID=3"};
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  std::string File = Dir.path("4711.2.3.addr");
  ASSERT_TRUE(exists(File)) << "announced once listening";
  std::string Address = firstLine(readFile(File));
  EXPECT_EQ(Address, Exec.address());
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  EXPECT_TRUE(openWithConcat(Address, Strategy::ZeroCopy, O));
  EXPECT_TRUE(Exec.stop());
  EXPECT_FALSE(exists(File)) << "withdrawn when the executor stops";
}

// A stop that comes between the announcement's writing and its rename
// leaves no file behind: the executor runs under gdb, which stops it as
// it enters rename() and resumes it with SIGTERM, so that the handler
// withdraws the announcement before the rename. The executor then ends
// at once, having announced nothing.
TEST(AnnouncementTest, AStopJustBeforeTheRenameLeavesNoFile) {
  std::string Gdb = findProgram("gdb");
  if (Gdb.empty())
    GTEST_SKIP() << "needs gdb to stop the executor at its rename";
  TempDir Dir;
  CommandResult R =
      runCommand({Gdb,
                  "-nx",
                  "-batch",
                  "-ex",
                  "set startup-with-shell off",
                  "-ex",
                  "set breakpoint pending on",
                  "-ex",
                  "handle SIGTERM nostop noprint pass",
                  "-ex",
                  "tbreak rename",
                  "-ex",
                  "run",
                  "-ex",
                  "signal SIGTERM",
                  "--args",
                  executorPath(),
                  "--bind",
                  "127.0.0.1:0",
                  "--announce",
                  Dir.dir()},
                 paced(60s), {"SLURM_JOB_ID=4713", "SLURM_STEP_ID=0", "SLURM_PROCID=0"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  ASSERT_TRUE(mentions(R.Output, "breakpoint 1")) << "gdb did not stop it at rename:\n" << R.Output;
  EXPECT_TRUE(mentions(R.Output, "exited normally")) << R.Output;
  EXPECT_FALSE(exists(Dir.path("4713.0.0.addr"))) << "the announcement outlived the stop";
}

// A wildcard bind is announced by this machine's name, never 0.0.0.0; an
// MPI rank names the file when Slurm's variables are absent.
TEST(AnnouncementTest, AWildcardBindIsAnnouncedByTheMachinesName) {
  TempDir Dir;
  TokenFile Token;
  ExecutorOptions EO;
  EO.Bind = "0.0.0.0:0";
  EO.Args = {"--announce", Dir.dir(), "--token-file", Token.path()};
  EO.Env = {"OMPI_COMM_WORLD_RANK=5", "PMIX_NAMESPACE=prterun-node-123@1"};
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  std::string Address = firstLine(readFile(Dir.path("prterun-node-123_1.0.5.addr")));
  char Host[256] = {};
  ASSERT_EQ(::gethostname(Host, sizeof(Host) - 1), 0);
  std::string Port = Exec.address().substr(Exec.address().rfind(':'));
  EXPECT_EQ(Address, std::string(Host) + Port);
  EXPECT_FALSE(mentions(Address, "0.0.0.0")) << Address;
}

TEST(AnnouncementTest, AnUnusableDirectoryStopsTheExecutorSayingWhy) {
  TempDir Dir;
  CommandResult R =
      runCommand({executorPath(), "--bind", "127.0.0.1:0", "--announce", Dir.path("missing")});
  EXPECT_EQ(R.ExitStatus, 1);
  EXPECT_TRUE(mentions(R.Output, "--announce: cannot create " + Dir.path("missing"))) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "No such file or directory")) << R.Output;
}

// Outside a PMIx job there is nobody to tell: the executor says so and
// does not start (in a build without PMIx, it says that instead).
TEST(AnnouncementTest, AnnouncingThroughPmixOutsideAPmixJobStopsTheExecutor) {
  CommandResult R = runCommand({"/usr/bin/env", "-u", "PMIX_NAMESPACE", "-u", "PMIX_RANK", "-u",
                                "PMIX_SERVER_URI41", executorPath(), "--bind", "127.0.0.1:0",
                                "--announce", "pmix"});
  EXPECT_EQ(R.ExitStatus, 1) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "--announce pmix: this executor was ")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "not started by a PMIx launcher") ||
              mentions(R.Output, "built without PMIx (Debian: libpmix-dev)"))
      << R.Output;
  EXPECT_FALSE(mentions(R.Output, "listening on")) << R.Output;
}

} // namespace
