//===- PmixTest.cpp - Executors announced through PMIx in an MPMD job -----===//
//
// Open MPI's mpirun starts one host (PmixHost.cpp) and two executors with
// --announce pmix in one job; the host finds both through pmixSource()
// and checks a launch on each. The job's end, whether the executors stop
// by themselves (--idle-exit) or mpirun is told to stop (SIGTERM, as a
// batch system's time limit does), leaves no executor process behind.
// Without mpirun the whole binary is skipped (exit status 77), naming the
// package that brings it.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "ExecutorProcess.h"
#include "Text.h"

#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

// Marks the job's processes, for finding any left behind.
std::string freshMarker() {
  std::random_device R;
  return "CATALYST_REMOTE_PMIX_TEST=" + std::to_string(R()) + std::to_string(::getpid());
}

// Processes whose environment holds Marker (NAME=VALUE).
std::vector<pid_t> processesMarked(const std::string &Marker) {
  std::vector<pid_t> Found;
  DIR *D = ::opendir("/proc");
  if (!D)
    return Found;
  while (dirent *E = ::readdir(D)) {
    pid_t Pid = std::atoi(E->d_name);
    if (Pid <= 0)
      continue;
    std::ifstream In("/proc/" + std::string(E->d_name) + "/environ");
    std::stringstream Env;
    Env << In.rdbuf();
    std::string Text = '\0' + Env.str();
    if (Text.find('\0' + Marker + '\0') != std::string::npos)
      Found.push_back(Pid);
  }
  ::closedir(D);
  return Found;
}

// Waits up to Timeout until no process carries Marker.
bool noneLeft(const std::string &Marker, std::chrono::milliseconds Timeout) {
  auto Until = std::chrono::steady_clock::now() + Timeout;
  while (!processesMarked(Marker).empty()) {
    if (std::chrono::steady_clock::now() >= Until)
      return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// `timeout -s TERM Limit mpirun` with one host waiting up to 30 s for two
// members, and two executors with ExecutorArgs added.
CommandResult runJob(const std::string &Marker, const std::string &Limit,
                     const std::vector<std::string> &ExecutorArgs) {
  // The executors take a secret from the environment: none from the
  // shell that runs the tests.
  std::vector<std::string> Argv = {"/usr/bin/env",
                                   "-u",
                                   "CATALYST_REMOTE_TOKEN_FILE",
                                   "-u",
                                   "CATALYST_REMOTE_TOKEN",
                                   "/usr/bin/timeout",
                                   "-s",
                                   "TERM",
                                   Limit,
                                   "mpirun",
                                   "--allow-run-as-root",
                                   "--oversubscribe",
                                   "-x",
                                   Marker,
                                   "-n",
                                   "1",
                                   PMIX_HOST_PATH,
                                   "2",
                                   "30",
                                   ":",
                                   "-n",
                                   "2",
                                   executorPath(),
                                   "--bind",
                                   "127.0.0.1:0",
                                   "--announce",
                                   "pmix"};
  Argv.insert(Argv.end(), ExecutorArgs.begin(), ExecutorArgs.end());
  return runCommand(Argv, 120s);
}

void expectBothMembersServed(const CommandResult &R) {
  EXPECT_TRUE(mentions(R.Output, ": 2 members")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "rank 1 at 127.0.0.1:")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "rank 2 at 127.0.0.1:")) << R.Output;
  size_t Right = 0;
  for (size_t At = 0; (At = R.Output.find(": launch right", At)) != std::string::npos; ++At)
    ++Right;
  EXPECT_EQ(Right, 2u) << R.Output;
}

// Executors that stop once idle end the job themselves.
TEST(PmixTest, TheHostFindsEveryExecutorAndTheJobEndsWithThem) {
  std::string Marker = freshMarker();
  CommandResult R = runJob(Marker, "90", {"--idle-exit", "3"});
  EXPECT_EQ(R.ExitStatus, 0) << R.Output;
  expectBothMembersServed(R);
  EXPECT_TRUE(noneLeft(Marker, 5s)) << "processes of the job outlived mpirun";
}

// Executors that would serve for ever end when mpirun is told to stop.
TEST(PmixTest, SigtermToMpirunLeavesNoExecutor) {
  std::string Marker = freshMarker();
  CommandResult R = runJob(Marker, "15", {});
  EXPECT_EQ(R.ExitStatus, 124) << "mpirun should have run until timeout stopped it: " << R.Output;
  expectBothMembersServed(R);
  EXPECT_TRUE(noneLeft(Marker, 5s)) << "processes of the job outlived mpirun";
}

bool onPath(const std::string &Program) {
  std::string Path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::stringstream Dirs(Path);
  for (std::string Dir; std::getline(Dirs, Dir, ':');)
    if (!Dir.empty() && ::access((Dir + "/" + Program).c_str(), X_OK) == 0)
      return true;
  return false;
}

} // namespace

int main(int Argc, char **Argv) {
  if (!onPath("mpirun")) {
    std::printf("cluster.pmix: no mpirun on PATH (Debian: openmpi-bin): skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&Argc, Argv);
  return RUN_ALL_TESTS();
}
