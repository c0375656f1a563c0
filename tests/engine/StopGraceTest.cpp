//===- StopGraceTest.cpp - A stopping executor lets launches finish -------===//
//
// A cluster's launcher ends a job with SIGTERM (srun, mpirun), and SIGKILL
// some time later. The executor then stops taking sessions at once (its
// announcement withdrawn, its sockets closed), lets the launches already
// running finish and their results reach their hosts, and ends; what has
// not finished within --stop-grace is killed.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "TempDir.h"
#include "Text.h"

#include <csignal>
#include <future>
#include <sys/stat.h>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}

bool waitForFile(const std::string &Path, std::chrono::milliseconds Timeout) {
  auto Until = Clock::now() + Timeout;
  while (!exists(Path) && Clock::now() < Until)
    std::this_thread::sleep_for(10ms);
  return exists(Path);
}

// A launch of sleepy_flag on its own thread: it creates Flag once the
// kernel runs, sleeps Ms and returns Ms.
class SleepyLaunch {
public:
  SleepyLaunch(Session &S, int64_t Ms, const std::string &Flag) : Path(Flag.begin(), Flag.end()) {
    Path.push_back('\0');
    In = makeDenseInput({1}, std::vector<int64_t>{Ms});
    PathIn = makeDenseInput({int64_t(Path.size())}, 1, Path.data());
    Out.poison();
    Result = std::async(std::launch::async, [this, &S] {
      llvm::Error Err = S.launch({remoteEntry("sleepy_flag"),
                                  "sleepy.o",
                                  {{In->D.data(), 1, 8}, {PathIn->D.data(), 1, 1}},
                                  {{Out.data(), 1, 8}}});
      return Err ? llvm::toString(std::move(Err)) : std::string();
    });
  }
  ~SleepyLaunch() {
    if (Result.valid())
      Result.wait();
    std::free(Out.allocated());
  }

  // The launch's error text ("" on success), once it ended within Timeout.
  std::string end(std::chrono::milliseconds Timeout) {
    if (Result.wait_for(Timeout) != std::future_status::ready)
      return "the launch did not end within the test's deadline";
    return Result.get();
  }
  std::vector<int64_t> output() const { return as<int64_t>(Out.values()); }

private:
  std::vector<char> Path;
  std::unique_ptr<Input> In, PathIn;
  Desc Out{1, 8};
  std::future<std::string> Result;
};

std::unique_ptr<Session> openWithSleepy(const ExecutorProcess &Exec) {
  auto S = openSession(Exec.address());
  if (S) {
    EXPECT_EQ(messageOf(S->sendBinary(kernelObject("sleepy"), BinaryFormat::Object)), "");
  }
  return S;
}

// A session left open on Exec, which was then stopped (SIGTERM) and has
// exited; null, with a failure recorded, when any of that went wrong. The
// host may not have read the connection's end yet.
std::unique_ptr<Session> sessionOfAStoppedExecutor(ExecutorProcess &Exec) {
  if (!Exec.start())
    return nullptr;
  auto S = openWithSleepy(Exec);
  if (!S || ::kill(Exec.pid(), SIGTERM) != 0 || !waitUntilExited(Exec.pid(), paced(5s))) {
    ADD_FAILURE() << "could not open a session and stop its executor";
    return nullptr;
  }
  return S;
}

bool allGone(const std::vector<pid_t> &Pids, std::chrono::milliseconds Timeout) {
  for (pid_t P : Pids)
    if (!waitUntilExited(P, Timeout))
      return false;
  return true;
}

// The launch running when SIGTERM comes returns its result; a host that
// comes afterwards finds nobody listening; the executor and its
// connection process are gone soon after the launch ended.
TEST(StopGraceTest, ALaunchRunningAtSigtermFinishesAndItsResultArrives) {
  TempDir Dir;
  ExecutorProcess Exec;
  ExecutorOptions EO;
  EO.Args = {"--announce", Dir.dir()};
  EO.Env = {"SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_PROCID=0"};
  ASSERT_TRUE(Exec.start(EO));
  auto S = openWithSleepy(Exec);
  ASSERT_TRUE(S);
  std::vector<pid_t> Connections;
  ASSERT_TRUE(Exec.waitForConnections(1, Connections, paced(5s)));
  const int64_t Ms = 1500;
  SleepyLaunch Running(*S, Ms, Dir.path("running"));
  ASSERT_TRUE(waitForFile(Dir.path("running"), paced(10s))) << "the kernel never started";
  auto Stopped = Clock::now();
  ASSERT_EQ(::kill(Exec.pid(), SIGTERM), 0);
  // Refused while the launch still runs: the listening sockets are closed
  // (or, should the host connect before the listener got to closing them,
  // reset with the queue they held). A handshake the kernel completes for
  // the host just as the listening socket closes is dropped on the
  // executor's side without a reset: that host, which waits for the
  // executor to speak first, hears nothing until its handshake timeout.
  SessionOptions Tcp;
  Tcp.Transport = TransportKind::Tcp;
  Tcp.HandshakeTimeout = paced(2s);
  auto Late = Session::open(Exec.address(), Tcp);
  EXPECT_FALSE(Late) << "a session opened after SIGTERM";
  if (!Late) {
    std::string Msg = llvm::toString(Late.takeError());
    EXPECT_TRUE(mentions(Msg, "refused") || mentions(Msg, "reset by peer") ||
                mentions(Msg, "did not complete the handshake in time"))
        << Msg;
  }
  EXPECT_FALSE(exists(Dir.path("7.0.0.addr"))) << "the announcement outlived SIGTERM";
  EXPECT_EQ(Running.end(paced(10s)), "");
  EXPECT_EQ(Running.output(), std::vector<int64_t>{Ms});
  EXPECT_TRUE(allGone(Connections, paced(2s))) << "a connection process outlived its launch";
  EXPECT_TRUE(waitUntilExited(Exec.pid(), paced(2s))) << "the executor outlived its connections";
  EXPECT_LT(Clock::now() - Stopped, paced(5s));
}

// A kernel longer than --stop-grace is not waited for: its process is
// killed once the grace is over, and its host told.
TEST(StopGraceTest, ALaunchLongerThanTheGraceIsKilled) {
  TempDir Dir;
  ExecutorProcess Exec;
  ExecutorOptions EO;
  EO.Args = {"--stop-grace", "1"};
  EO.LogPath = Dir.path("executor.log");
  ASSERT_TRUE(Exec.start(EO));
  auto S = openWithSleepy(Exec);
  ASSERT_TRUE(S);
  std::vector<pid_t> Connections;
  ASSERT_TRUE(Exec.waitForConnections(1, Connections, paced(5s)));
  SleepyLaunch Running(*S, 30000, Dir.path("running"));
  ASSERT_TRUE(waitForFile(Dir.path("running"), paced(10s))) << "the kernel never started";
  auto Stopped = Clock::now();
  ASSERT_EQ(::kill(Exec.pid(), SIGTERM), 0);
  std::string Msg = Running.end(paced(10s));
  EXPECT_NE(Msg, "");
  EXPECT_TRUE(mentions(Msg, "killed by signal 9")) << Msg;
  EXPECT_TRUE(allGone(Connections, paced(2s)));
  EXPECT_TRUE(waitUntilExited(Exec.pid(), paced(2s)));
  auto Took = Clock::now() - Stopped;
  EXPECT_GE(Took, 900ms);
  EXPECT_LT(Took, hangBound(1s)) << "the kernel sleeps 30 s";
  EXPECT_TRUE(waitForText(Dir.path("executor.log"), "1 s after SIGTERM (--stop-grace)", 2s))
      << readFile(Dir.path("executor.log"));
}

// Idle sessions do not hold the executor up: it ends at once.
TEST(StopGraceTest, IdleSessionsEndAtOnce) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  auto S = openWithSleepy(Exec);
  ASSERT_TRUE(S);
  auto Stopped = Clock::now();
  ASSERT_EQ(::kill(Exec.pid(), SIGTERM), 0);
  EXPECT_TRUE(waitUntilExited(Exec.pid(), paced(5s)));
  EXPECT_LT(Clock::now() - Stopped, paced(1s));
}

// A session the executor ends as it stops hears why, and takes it for an
// executor gone.
TEST(StopGraceTest, AStoppedSessionIsToldTheExecutorIsStopping) {
  ExecutorProcess Exec;
  auto S = sessionOfAStoppedExecutor(Exec);
  ASSERT_TRUE(S);
  EXPECT_TRUE(waitUntil([&] { return !S->connected(); }, paced(5s)));
  auto [Kind, Msg] = failureOf(S->ping());
  EXPECT_EQ(Kind, FailureKind::ExecutorLost) << Msg;
  EXPECT_TRUE(mentions(Msg, "the executor saying: \"the executor is stopping: its connection "
                            "process was told to end (SIGTERM or SIGHUP)\""))
      << Msg;
}

// Closing a session whose executor has stopped frees nothing there (the
// connection process went, and what the session held with it), so it is
// not an error, even before the host has read the connection's end.
TEST(StopGraceTest, ClosingASessionOfAStoppedExecutorSucceeds) {
  ExecutorProcess Exec;
  auto S = sessionOfAStoppedExecutor(Exec);
  ASSERT_TRUE(S);
  EXPECT_EQ(messageOf(S->close()), "");
}

} // namespace
