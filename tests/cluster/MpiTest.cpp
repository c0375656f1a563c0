//===- MpiTest.cpp - Executors started by Open MPI's mpirun ----------------===//
//
// mpirun -n 4 starts four executors that announce themselves by their MPI
// job and rank and serve sessions; SIGTERM to mpirun, as a batch system
// ends a job, ends them all and withdraws every announcement (Open MPI
// sends SIGKILL one second after SIGTERM).
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"
#include "MpiRun.h"
#include "Procfs.h"
#include "TempDir.h"

using namespace catalyst::remote::test;

namespace {

TEST(MpiTest, MpirunStartsExecutorsThatEndWithIt) {
  if (std::string Package = MpiRun::missingPackage(); !Package.empty())
    GTEST_SKIP() << "Open MPI's mpirun is not installed: needs the Debian package " << Package
                 << " (tools/bootstrap installs it where apt has it)";
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
