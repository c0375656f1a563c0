//===- SlurmTest.cpp - Executors started by Slurm --------------------------===//
//
// On a Slurm cluster of this machine (SlurmCluster.h), executors started
// by srun, by an sbatch script and as a component of a heterogeneous job
// announce themselves in a folder, serve sessions at the addresses they
// announce, and leave neither a file nor a process once their job ends.
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"
#include "Procfs.h"

#include <csignal>
#include <cstdlib>
#include <thread>

using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

// <job>.<step>.<rank>.addr for ranks 0..N-1 of one step of Job, whatever
// Slurm numbered the step.
::testing::AssertionResult namedByJobStepRank(const std::vector<std::string> &Names, unsigned Job,
                                              size_t N) {
  std::string Prefix = std::to_string(Job) + ".";
  std::string Step = Names.empty() ? "" : Names[0].substr(0, Names[0].find('.', Prefix.size()));
  std::vector<std::string> Expected;
  for (size_t Rank = 0; Rank < N; ++Rank)
    Expected.push_back(Step + "." + std::to_string(Rank) + ".addr");
  if (Step.rfind(Prefix, 0) == 0 && Names == Expected)
    return ::testing::AssertionSuccess();
  auto R = ::testing::AssertionFailure()
           << "not named <job>.<step>.<rank>.addr for job " << Job << ":";
  for (const std::string &Name : Names)
    R << " " << Name;
  return R;
}

::testing::AssertionResult allServe(const std::string &Dir, const std::vector<std::string> &Names,
                                    const std::string &TokenPath) {
  for (const std::string &Name : Names)
    if (auto R = servesSessions(announcedAddress(Dir, Name), TokenPath); !R)
      return R << " (" << Name << ")";
  return ::testing::AssertionSuccess();
}

// srun -n 4 as a job of its own: four announcements, one per rank; each
// serves sessions; scancel ends them all and withdraws every file.
TEST_F(SlurmTest, SrunStartsExecutorsThatEndWithTheirJob) {
  BackgroundCommand Srun;
  unsigned Job = 0;
  ASSERT_TRUE(startExecutors(4, Srun, "srun4", Job));
  std::vector<std::string> Names = announcements(announceDir());
  EXPECT_TRUE(namedByJobStepRank(Names, Job, 4));
  EXPECT_TRUE(allServe(announceDir(), Names, Token.path()));
  EXPECT_EQ(Cluster.jobState(Job), "RUNNING");
  ASSERT_EQ(Cluster.scancel(Job).ExitStatus, 0);
  EXPECT_TRUE(waitUntilAllGone(announceDir()));
  EXPECT_TRUE(Srun.wait(EndTimeout)) << "srun outlived its job";
  EXPECT_TRUE(Cluster.waitForJobEnd(Job, EndTimeout));
}

// An sbatch script running srun: the same, and the job ends at scancel.
TEST_F(SlurmTest, AnSbatchJobsExecutorsEndWithIt) {
  std::string Command;
  for (const std::string &A : executorCommand(announceDir(), Token.path()))
    Command += " " + A;
  unsigned Job = Cluster.sbatch("#!/bin/sh\n#SBATCH -n 4\nexec srun" + Command + "\n");
  ASSERT_NE(Job, 0u);
  std::vector<std::string> Names;
  ASSERT_TRUE(waitForAnnouncements(announceDir(), 4, Names))
      << readFile(Cluster.path("job-" + std::to_string(Job) + ".out"));
  EXPECT_TRUE(namedByJobStepRank(Names, Job, 4));
  EXPECT_TRUE(allServe(announceDir(), Names, Token.path()));
  EXPECT_EQ(Cluster.jobState(Job), "RUNNING");
  ASSERT_EQ(Cluster.scancel(Job).ExitStatus, 0);
  EXPECT_TRUE(waitUntilAllGone(announceDir()));
  EXPECT_TRUE(Cluster.waitForJobState(Job, {"CANCELLED"}, EndTimeout));
}

// A heterogeneous job: its first component runs the host program, which
// opens the pool of the second component's four executors (pool:DIR) and
// runs launches across them, each checked; the job ends with the host, and
// takes the executors with it.
TEST_F(SlurmTest, AHeterogeneousJobsHostReachesItsExecutors) {
  std::string Command;
  for (const std::string &A : executorCommand(announceDir(), Token.path()))
    Command += " " + A;
  std::string Script = "#!/bin/sh\n"
                       "#SBATCH -n 1\n"
                       "#SBATCH hetjob\n"
                       "#SBATCH -n 4\n"
                       "srun --het-group=1" +
                       Command +
                       " &\n"
                       "CATALYST_REMOTE_TOKEN_FILE=" +
                       Token.path() + " srun --het-group=0 " + CLUSTER_HOST_PATH +
                       " pool:" + announceDir() + " 4 32\n";
  unsigned Job = Cluster.sbatch(Script);
  ASSERT_NE(Job, 0u);
  EXPECT_TRUE(Cluster.waitForJobEnd(Job, 60s));
  std::string Output = readFile(Cluster.path("job-" + std::to_string(Job) + ".out"));
  EXPECT_EQ(Cluster.jobState(Job), "COMPLETED") << Output;
  EXPECT_NE(Output.find("host: every launch right; 4 of 4 members ran launches"), std::string::npos)
      << Output;
  EXPECT_TRUE(waitUntilAllGone(announceDir()));
}

// srun --kill-on-bad-exit=0: a member that dies leaves the others serving.
// One stopped by SIGTERM withdraws its announcement; one killed by SIGKILL
// cannot, and its file stays, naming a dead address, even after the job:
// hosts must drop members they cannot reach.
TEST_F(SlurmTest, AMemberKilledMidRunLeavesTheOthersServing) {
  BackgroundCommand Srun;
  unsigned Job = 0;
  ASSERT_TRUE(startExecutors(4, Srun, "kill4", Job, {"--kill-on-bad-exit=0"}));
  std::vector<std::string> Names = announcements(announceDir());
  ASSERT_EQ(Names.size(), 4u);
  pid_t Stopped = executorWhere(announceDir(), "SLURM_PROCID", "2");
  pid_t Killed = executorWhere(announceDir(), "SLURM_PROCID", "3");
  ASSERT_GT(Stopped, 0);
  ASSERT_GT(Killed, 0);

  ASSERT_EQ(::kill(Stopped, SIGTERM), 0);
  EXPECT_TRUE(waitUntilExited(Stopped, EndTimeout));
  EXPECT_TRUE(waitUntil([&] { return announcements(announceDir()).size() == 3; }, EndTimeout))
      << "a member stopped by SIGTERM withdraws its announcement";
  EXPECT_TRUE(allServe(announceDir(), {Names[0], Names[1], Names[3]}, Token.path()));

  std::string Dead = announcedAddress(announceDir(), Names[3]);
  ASSERT_EQ(::kill(Killed, SIGKILL), 0);
  EXPECT_TRUE(waitUntilExited(Killed, EndTimeout));
  EXPECT_FALSE(servesSessions(Dead, Token.path())) << "nobody listens at a killed member's address";
  EXPECT_TRUE(allServe(announceDir(), {Names[0], Names[1]}, Token.path()));
  EXPECT_EQ(announcements(announceDir()), (std::vector<std::string>{Names[0], Names[1], Names[3]}))
      << "a member killed by SIGKILL leaves its announcement behind";
  EXPECT_TRUE(Srun.running()) << "srun --kill-on-bad-exit=0 keeps the step going";
  EXPECT_EQ(Cluster.jobState(Job), "RUNNING");

  ASSERT_EQ(Cluster.scancel(Job).ExitStatus, 0);
  EXPECT_TRUE(Srun.wait(EndTimeout));
  EXPECT_TRUE(waitUntil([&] { return executorsAnnouncingIn(announceDir()).empty(); }, EndTimeout));
  EXPECT_EQ(announcements(announceDir()), std::vector<std::string>{Names[3]})
      << "only the killed member's stale announcement outlives the job";
}

// How soon executors whose launcher was killed must be gone.
constexpr std::chrono::seconds OrphanBound{5};

// The pid a job script wrote to File once it started srun, when it has.
pid_t srunOfScript(const std::string &File) {
  pid_t Pid = 0;
  waitUntil([&] { return (Pid = std::atoi(readFile(File).c_str())) > 0; }, AnnounceTimeout);
  return Pid;
}

// A job script's srun killed while the job goes on: its step outlives it
// (Slurm ends it only with the job), so the executors, which watch srun
// on its node, stop themselves. Killed with SIGKILL they withdraw their
// announcements; a cleanup's SIGTERM then SIGKILL 0.2 s later makes srun
// kill the step with SIGKILL, and a host reading the folder removes what
// that left.
TEST_F(SlurmTest, ExecutorsEndWhenTheirSrunIsKilledInsideTheJob) {
  std::string Command;
  for (const std::string &A : executorCommand(announceDir(), Token.path()))
    Command += " " + A;
  for (bool MidStop : {false, true}) {
    SCOPED_TRACE(MidStop ? "SIGTERM, then SIGKILL 0.2 s later" : "SIGKILL");
    std::string PidFile = Cluster.path(MidStop ? "srun2.pid" : "srun1.pid");
    unsigned Job = Cluster.sbatch("#!/bin/sh\n#SBATCH -n 2\nsrun" + Command + " &\necho $! > " +
                                  PidFile + "\nwait\nsleep 120\n");
    ASSERT_NE(Job, 0u);
    std::vector<std::string> Names;
    ASSERT_TRUE(waitForAnnouncements(announceDir(), 2, Names));
    pid_t Srun = srunOfScript(PidFile);
    ASSERT_GT(Srun, 0) << "the script did not say which srun it started";
    if (MidStop) {
      ASSERT_EQ(::kill(Srun, SIGTERM), 0);
      std::this_thread::sleep_for(200ms); // the cleanup's own pause, not a wait for a condition
      ::kill(Srun, SIGKILL);              // fails when srun already ended: fine either way
      EXPECT_TRUE(waitUntilAllGoneForAHost(announceDir(), OrphanBound));
    } else {
      ASSERT_EQ(::kill(Srun, SIGKILL), 0);
      EXPECT_TRUE(waitUntilAllGone(announceDir(), OrphanBound));
    }
    EXPECT_EQ(Cluster.jobState(Job), "RUNNING") << "the job goes on without its step";
    ASSERT_EQ(Cluster.scancel(Job).ExitStatus, 0);
    EXPECT_TRUE(Cluster.waitForJobEnd(Job, EndTimeout));
  }
}

// srun as a job of its own, killed: Slurm cancels the step with SIGKILL,
// which no executor can act on, so what must hold is that nothing is left
// that a host would dial: no executor, and no file once a host has read
// the folder.
TEST_F(SlurmTest, AnSrunJobKilledLeavesNothingAHostWouldDial) {
  for (bool MidStop : {false, true}) {
    SCOPED_TRACE(MidStop ? "SIGTERM, then SIGKILL 0.2 s later" : "SIGKILL");
    BackgroundCommand Srun;
    unsigned Job = 0;
    ASSERT_TRUE(startExecutors(2, Srun, MidStop ? "killed-mid-stop" : "killed", Job));
    if (MidStop) {
      ASSERT_TRUE(Srun.signal(SIGTERM));
      std::this_thread::sleep_for(200ms); // the cleanup's own pause, not a wait for a condition
      Srun.signal(SIGKILL);               // false when srun already ended: fine either way
    } else {
      ASSERT_EQ(::kill(Srun.pid(), SIGKILL), 0);
    }
    EXPECT_TRUE(waitUntilAllGoneForAHost(announceDir(), OrphanBound));
    EXPECT_TRUE(Cluster.waitForJobEnd(Job, EndTimeout));
  }
}

#ifdef PYTHON_EXECUTABLE
// catalyst_remote.srun_pool from Python, in this cluster: tests/python's
// srun case (test_cluster.py), which starts four executors as a step of a
// job of its own, sweeps launches over them, and checks that closing the
// pool ends srun and them; and a pool whose interpreter is killed with
// SIGKILL, whose srun and executors must end all the same. Its output must
// say both passed, not skipped.
TEST_F(SlurmTest, PythonsSrunPoolServesAndEndsWithIt) {
  std::vector<std::string> Env = Cluster.clientEnvironment();
  Env.push_back("PYTHONPATH=" PYTHON_PACKAGE_DIR);
  Env.push_back("PYTHONDONTWRITEBYTECODE=1");
  Env.push_back("CATALYST_REMOTE_TEST_EXECUTOR=" EXECUTOR_PATH);
  Env.push_back("CATALYST_REMOTE_TEST_KERNELS=" KERNEL_DIR);
  Env.push_back("CATALYST_REMOTE_TEST_SLURM=" + announceDir());
  CommandResult R = runCommand({PYTHON_EXECUTABLE, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                PYTHON_CLUSTER_TESTS, "-k", "srun_started or srun_pool_ends"},
                               120s, Env);
  EXPECT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_NE(R.Output.find("2 passed"), std::string::npos) << R.Output;
  EXPECT_EQ(Cluster.jobNamed("python-srun-pool"), 0u) << "the pool's job outlived it";
  EXPECT_EQ(Cluster.jobNamed("python-srun-killed"), 0u)
      << "the job of a pool whose interpreter was killed outlived it";
  EXPECT_TRUE(announcements(announceDir()).empty());
}
#endif

} // namespace
