//===- RunTest.cpp - catalyst-remote run: repeats, progress, the README ----===//

#include "CliHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Procfs.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <map>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

class RunTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
  std::mt19937_64 Rng{11};
};

std::string f64s(const std::vector<double> &V) {
  return std::string(reinterpret_cast<const char *>(V.data()), V.size() * 8);
}

// Every launch of a --repeat receives into the buffers of the one before;
// the last one's outputs are written, and the times are summarized.
TEST_F(RunTest, RepeatSummarizesLaunchTimes) {
  TempDir Dir;
  std::string Data = randomValues(2 * 3 * 4, 4, false, Rng);
  writeFile(Dir.path("in.npy"), npyBytes({"<f4", true, {2, 3, 4}, Data}));
  for (const char *Strategy : {"zerocopy", "batched", "naive"}) {
    SCOPED_TRACE(Strategy);
    CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r3_e4", "--in",
                              Dir.path("in.npy"), "--out", "f32:3", "--out-dir", Dir.dir(),
                              "--repeat", "5", "--strategy", Strategy, "--json"});
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    auto V = llvm::json::parse(R.Output);
    ASSERT_TRUE(static_cast<bool>(V)) << llvm::toString(V.takeError()) << R.Output;
    const llvm::json::Object &O = *V->getAsObject();
    EXPECT_EQ(O.getString("strategy"), Strategy);
    const llvm::json::Object &T = *O.getObject("launch_ns");
    EXPECT_EQ(T.getInteger("count"), 5);
    EXPECT_GT(*T.getInteger("min"), 0);
    EXPECT_LE(*T.getInteger("min"), *T.getInteger("median"));
    EXPECT_LE(*T.getInteger("median"), *T.getInteger("max"));
    EXPECT_EQ(O.getInteger("payload_bytes"), 2 * 24 * 4);
    EXPECT_GT(*O.getInteger("bytes_per_s"), 0);
    const llvm::json::Object &Last = *O.getObject("last_launch");
    EXPECT_GT(*Last.getInteger("round_trips"), 0);
    EXPECT_TRUE(Last.getObject("phases_ns")->getInteger("kernel"));
    const llvm::json::Object &Out = *O.getArray("outputs")->front().getAsObject();
    EXPECT_EQ(Out.getString("path"), Dir.path("out0.npy"));
    EXPECT_EQ(Out.getString("dtype"), "float32");
    NpySpec File;
    ASSERT_TRUE(readToolNpy(Dir.path("out0.npy"), File));
    EXPECT_TRUE(File.Data == fortranToC(Data, {2, 3, 4}, 4));
  }
  CommandResult R =
      runCli({"run", Exec.address(), kernelObject("copy"), "copy_r3_e4", "--in", Dir.path("in.npy"),
              "--out", "f32:3", "--out-dir", Dir.dir(), "--repeat", "3"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_NE(R.Output.find(Dir.path("out0.npy") + ": float32 (2, 3, 4), 96 bytes\n"),
            std::string::npos)
      << R.Output;
  EXPECT_NE(R.Output.find("3 launches (zerocopy): median "), std::string::npos) << R.Output;
  EXPECT_NE(R.Output.find(" GB/s of inputs and outputs\n"), std::string::npos) << R.Output;
}

// An output is written to a fresh file beside it and renamed over it: a
// symlink planted where the file is written first, as another user could
// in a shared directory, is neither followed nor replaced.
TEST_F(RunTest, OutputsAreWrittenThroughNoPlantedSymlink) {
  TempDir Dir;
  std::string Data = randomValues(6, 8, false, Rng);
  writeFile(Dir.path("in.npy"), npyBytes({"<f8", false, {6}, Data}));
  writeFile(Dir.path("victim"), "not to be overwritten");
  // Where the file used to be written first.
  ASSERT_EQ(::symlink(Dir.path("victim").c_str(), Dir.path("out0.npy.partial").c_str()), 0);
  CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in",
                            Dir.path("in.npy"), "--out", "f64:1", "--out-dir", Dir.dir()});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_EQ(readFile(Dir.path("victim")), "not to be overwritten");
  NpySpec File;
  ASSERT_TRUE(readToolNpy(Dir.path("out0.npy"), File));
  EXPECT_TRUE(File.Data == Data);
  struct stat St;
  ASSERT_EQ(::lstat(Dir.path("out0.npy").c_str(), &St), 0);
  EXPECT_TRUE(S_ISREG(St.st_mode));
}

// --trace writes the launches' trace: valid JSON, each launch a span on
// the tool's side and on the executor's, with the kernel among its phases.
TEST_F(RunTest, TraceWritesEveryLaunch) {
  TempDir Dir;
  std::string Data = randomValues(64, 8, false, Rng);
  writeFile(Dir.path("in.npy"), npyBytes({"<f8", false, {64}, Data}));
  std::string Trace = Dir.path("trace.json");
  CommandResult R =
      runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in", Dir.path("in.npy"),
              "--out", "f64:1", "--out-dir", Dir.dir(), "--repeat", "3", "--trace", Trace});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  auto V = llvm::json::parse(readFile(Trace));
  ASSERT_TRUE(static_cast<bool>(V)) << llvm::toString(V.takeError());
  // Launch spans per process: the tool's and the executor's connection
  // process's, three each.
  std::map<int64_t, int> Launches;
  int Kernels = 0;
  for (const llvm::json::Value &E : *V->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object &O = *E.getAsObject();
    if (O.getString("name") == "launch _catalyst_pyface_copy_r1_e8")
      ++Launches[O.getInteger("pid").value_or(0)];
    Kernels += O.getString("name") == "kernel";
  }
  EXPECT_EQ(Launches.size(), 2u);
  for (auto [Pid, Count] : Launches)
    EXPECT_EQ(Count, 3) << "pid " << Pid;
  EXPECT_EQ(Kernels, 3);
}

// The README's example, as a reader would type it: two matrices, one of
// them in Fortran order, into the example kernel, out0.npy in the current
// folder.
TEST_F(RunTest, TheReadmeExample) {
  TempDir Dir;
  writeFile(Dir.path("a.npy"), npyBytes({"<f8", false, {2, 3}, f64s({0, 1, 2, 3, 4, 5})}));
  // 10 * ones((2, 3)) + [[0, 100, 200], [300, 400, 500]], in Fortran order.
  writeFile(Dir.path("b.npy"),
            npyBytes({"<f8", true, {2, 3}, f64s({10, 310, 110, 410, 210, 510})}));
  CommandResult R = runCommand(
      {"/bin/sh", "-c",
       "cd \"$1\" && exec \"$2\" run \"$3\" \"$4\" add --in a.npy --in b.npy --out float64:2", "sh",
       Dir.dir(), CATALYST_REMOTE_CLI_PATH, Exec.address(), kernelObject("add")});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_EQ(R.Output.rfind("out0.npy: float64 (2, 3), 48 bytes\n", 0), 0u) << R.Output;
  NpySpec Out;
  ASSERT_TRUE(readToolNpy(Dir.path("out0.npy"), Out));
  EXPECT_EQ(Out.Data, f64s({10, 111, 212, 313, 414, 515}));
}

// The output of a program whose stderr is a terminal (a pseudo-terminal
// here), and whose stdout is not.
struct TerminalRun {
  int ExitStatus = -1;
  std::string Terminal;
};

TerminalRun runOnTerminal(const std::vector<std::string> &Args) {
  TerminalRun Run;
  int Master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (Master < 0 || ::grantpt(Master) != 0 || ::unlockpt(Master) != 0)
    return Run;
  std::string SlavePath = ::ptsname(Master);
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&Actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&Actions, STDERR_FILENO, SlavePath.c_str(), O_RDWR | O_NOCTTY,
                                   0);
  std::vector<std::string> Argv = {CATALYST_REMOTE_CLI_PATH};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  std::vector<char *> CArgs;
  for (std::string &A : Argv)
    CArgs.push_back(A.data());
  CArgs.push_back(nullptr);
  pid_t Pid;
  int Rc = ::posix_spawn(&Pid, CArgs[0], &Actions, nullptr, CArgs.data(), environ);
  posix_spawn_file_actions_destroy(&Actions);
  if (Rc != 0) {
    ::close(Master);
    return Run;
  }
  // Read until the program has exited and the terminal is drained.
  auto Deadline = Clock::now() + std::chrono::seconds(60);
  int Status = 0;
  bool Exited = false;
  while (Clock::now() < Deadline) {
    pollfd P{Master, POLLIN, 0};
    if (::poll(&P, 1, 50) > 0) {
      char Buf[4096];
      ssize_t N = ::read(Master, Buf, sizeof(Buf));
      if (N > 0) {
        Run.Terminal.append(Buf, size_t(N));
        continue;
      }
    }
    if (Exited)
      break;
    Exited = ::waitpid(Pid, &Status, WNOHANG) == Pid;
  }
  if (!Exited) {
    ::kill(Pid, SIGKILL);
    ::waitpid(Pid, &Status, 0);
  }
  ::close(Master);
  if (Exited && WIFEXITED(Status))
    Run.ExitStatus = WEXITSTATUS(Status);
  return Run;
}

// 80 MiB out and back and a kernel of 2 s: the bar shows on a terminal,
// and is erased at the end; a pipe gets none of it. Over TCP, whose bytes
// the bar counts as they cross the socket (shared memory's do not).
TEST_F(RunTest, ProgressBarOnlyOnATerminal) {
  ::setenv("CATALYST_REMOTE_TRANSPORT", "tcp", 1);
  struct Restore {
    ~Restore() { ::unsetenv("CATALYST_REMOTE_TRANSPORT"); }
  } Unset;
  TempDir Dir;
  constexpr int64_t Bytes = int64_t(80) << 20;
  int64_t Ms = 2000;
  writeFile(Dir.path("ms.npy"),
            npyBytes({"<i8", false, {1}, std::string(reinterpret_cast<char *>(&Ms), 8)}));
  writeFile(Dir.path("data.npy"), npyBytes({"|u1", false, {Bytes}, std::string(Bytes, '\7')}));
  std::vector<std::string> Args = {"run",
                                   Exec.address(),
                                   kernelObject("copy"),
                                   "copy_slow",
                                   "--in",
                                   Dir.path("ms.npy"),
                                   "--in",
                                   Dir.path("data.npy"),
                                   "--out",
                                   "u8:1",
                                   "--out-dir",
                                   Dir.dir()};
  TerminalRun T = runOnTerminal(Args);
  EXPECT_EQ(T.ExitStatus, 0) << T.Terminal;
  EXPECT_NE(T.Terminal.find("\rcatalyst-remote: sent 80.0 MiB, the kernel is running"),
            std::string::npos)
      << T.Terminal;
  EXPECT_EQ(T.Terminal.substr(T.Terminal.size() - 4), "\r\033[K") << "the bar was left behind";

  CommandResult Piped = runCli(Args);
  EXPECT_EQ(Piped.ExitStatus, 0) << Piped.Output;
  EXPECT_EQ(Piped.Output.find('\r'), std::string::npos) << Piped.Output;
  EXPECT_EQ(Piped.Output.find("MiB"), std::string::npos) << Piped.Output;
}

} // namespace
