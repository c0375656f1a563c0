//===- MpiTest.cpp - Executors started by Open MPI's mpirun ----------------===//
//
// mpirun -n 4 starts four executors that announce themselves by their MPI
// job and rank and serve sessions; SIGTERM to mpirun, as a batch system
// ends a job, ends them all and withdraws every announcement (Open MPI
// sends SIGKILL one second after SIGTERM). An mpirun that dies without a
// word (SIGKILL, as a job script's cleanup or the OOM killer ends it)
// leaves nothing either: the executors watch the process that started
// them (executor/ParentWatch.h), or, announced through PMIx and started
// through a shell that outlives mpirun, their PMIx server
// (executor/PmixAnnouncement.h).
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"
#include "ExecutorProcess.h"
#include "MpiRun.h"
#include "Procfs.h"
#include "TempDir.h"

#include <csignal>
#include <thread>

using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

// How soon executors must be gone once their mpirun died without a word.
constexpr std::chrono::seconds OrphanBound{5};

#define SKIP_WITHOUT_MPIRUN()                                                                      \
  if (std::string Package = MpiRun::missingPackage(); !Package.empty())                            \
  GTEST_SKIP() << "Open MPI's mpirun is not installed: needs the Debian package " << Package       \
               << " (tools/bootstrap installs it where apt has it)"

// Four executors announced in Dir by Mpi.
::testing::AssertionResult startFour(MpiRun &Mpi, const TempDir &Dir, const TokenFile &Token) {
  if (!Mpi.start(4, executorCommand(Dir.dir(), Token.path()), Token.dir() + "/mpirun.out"))
    return ::testing::AssertionFailure() << "mpirun did not start";
  std::vector<std::string> Names;
  return waitForAnnouncements(Dir.dir(), 4, Names) << Mpi.command().output();
}

TEST(MpiTest, ExecutorsEndWhenMpirunIsKilled) {
  SKIP_WITHOUT_MPIRUN();
  TempDir Dir;
  TokenFile Token;
  MpiRun Mpi;
  ASSERT_TRUE(startFour(Mpi, Dir, Token));
  ASSERT_EQ(::kill(Mpi.command().pid(), SIGKILL), 0);
  EXPECT_TRUE(waitUntilAllGone(Dir.dir(), OrphanBound));
}

// A job script's cleanup: SIGTERM to mpirun's process group, SIGKILL
// 0.2 s later, before mpirun has stopped its ranks.
TEST(MpiTest, ExecutorsEndWhenMpirunIsKilledMidStop) {
  SKIP_WITHOUT_MPIRUN();
  TempDir Dir;
  TokenFile Token;
  MpiRun Mpi;
  ASSERT_TRUE(startFour(Mpi, Dir, Token));
  ASSERT_TRUE(Mpi.command().signal(SIGTERM));
  std::this_thread::sleep_for(200ms); // the cleanup's own pause, not a wait for a condition
  Mpi.command().signal(SIGKILL);      // false when mpirun already ended: fine either way
  EXPECT_TRUE(waitUntilAllGone(Dir.dir(), OrphanBound));
}

// The executors of this test: announced through PMIx, their environment
// holding Marker.
std::vector<pid_t> pmixExecutorsMarked(const std::string &Marker) {
  std::vector<pid_t> Found;
  std::string Name = Marker.substr(0, Marker.find('='));
  for (pid_t Pid : processesRunning(executorPath(), "pmix"))
    if (Name + "=" + environmentOf(Pid, Name) == Marker)
      Found.push_back(Pid);
  return Found;
}

// Executors behind a shell that outlives mpirun have a parent that lives
// on: only their lost connection to mpirun's PMIx server tells them
// their launcher is gone.
TEST(MpiTest, ExecutorsBehindAShellEndWhenTheirPmixServerIsLost) {
  SKIP_WITHOUT_MPIRUN();
  TempDir Dir;
  std::string Marker = "CATALYST_REMOTE_PMIX_LOSS_TEST=" + std::to_string(::getpid());
  std::string Shell = "'" + executorPath() +
                      "' --bind 127.0.0.1:0 --announce pmix & wait; echo the shell outlived it";
  MpiRun Mpi;
  ASSERT_TRUE(Mpi.start(2, {"/bin/sh", "-c", Shell}, Dir.dir() + "/mpirun.out", {}, {Marker}));
  // Each says it listens once its address is published and PMIx watched.
  ASSERT_TRUE(waitUntil(
      [&] {
        std::string Out = Mpi.command().output();
        size_t N = 0;
        for (size_t At = 0; (At = Out.find("Listening on", At)) != std::string::npos; ++At)
          ++N;
        return N == 2;
      },
      AnnounceTimeout))
      << Mpi.command().output();
  std::vector<pid_t> Executors = pmixExecutorsMarked(Marker);
  ASSERT_EQ(Executors.size(), 2u) << Mpi.command().output();
  for (pid_t Pid : Executors)
    ASSERT_NE(parentOf(Pid), Mpi.command().pid()) << "a shell stands between mpirun and " << Pid;
  ASSERT_EQ(::kill(Mpi.command().pid(), SIGKILL), 0);
  EXPECT_TRUE(waitUntil([&] { return pmixExecutorsMarked(Marker).empty(); }, OrphanBound))
      << pmixExecutorsMarked(Marker).size()
      << " executors outlived their PMIx server; mpirun said:\n"
      << Mpi.command().output();
  // What a failure left: nothing else would end it.
  for (pid_t Pid : pmixExecutorsMarked(Marker))
    ::kill(Pid, SIGKILL);
}

TEST(MpiTest, MpirunStartsExecutorsThatEndWithIt) {
  SKIP_WITHOUT_MPIRUN();
  TempDir Dir;
  TokenFile Token;
  MpiRun Mpi;
  ASSERT_TRUE(Mpi.start(4, executorCommand(Dir.dir(), Token.path()), Token.dir() + "/mpirun.out"));
  std::vector<std::string> Names;
  ASSERT_TRUE(waitForAnnouncements(Dir.dir(), 4, Names)) << Mpi.command().output();
  // <job>.0.<rank>, the job as PMIx names it: one for all four.
  std::string Job = Names[0].substr(0, Names[0].find('.'));
  for (size_t Rank = 0; Rank < 4; ++Rank)
    EXPECT_EQ(Names[Rank], Job + ".0." + std::to_string(Rank) + ".addr");
  for (const std::string &Name : Names)
    EXPECT_TRUE(servesSessions(announcedAddress(Dir.dir(), Name), Token.path())) << Name;
  ASSERT_TRUE(Mpi.terminate());
  EXPECT_TRUE(waitUntilAllGone(Dir.dir()));
  EXPECT_TRUE(Mpi.wait(EndTimeout)) << "mpirun outlived its ranks";
}

} // namespace
