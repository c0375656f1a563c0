//===- ExecutorProcess.cpp - A catalyst-remote-executor for one test ------===//

#include "ExecutorProcess.h"

#include "Procfs.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace catalyst::remote::test {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char *ListeningPrefix = "catalyst-remote-executor: listening on ";

std::vector<std::string> commandLine(const ExecutorOptions &Options) {
  std::vector<std::string> Args = {executorPath(), "--bind", "127.0.0.1:0"};
  for (const auto &P : Options.Plugins) {
    Args.push_back("--plugin");
    Args.push_back(P);
  }
  if (Options.UpstreamOnly)
    Args.push_back("--upstream-only");
  Args.insert(Args.end(), Options.Args.begin(), Options.Args.end());
  return Args;
}

// This process's environment with Extra's NAME=VALUE entries replacing or
// adding to it.
std::vector<std::string> environment(const std::vector<std::string> &Extra) {
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E) {
    std::string Entry = *E;
    std::string Name = Entry.substr(0, Entry.find('='));
    bool Overridden = false;
    for (const auto &X : Extra)
      Overridden |= X.compare(0, Name.size() + 1, Name + "=") == 0;
    if (!Overridden)
      Env.push_back(Entry);
  }
  Env.insert(Env.end(), Extra.begin(), Extra.end());
  return Env;
}

std::vector<char *> argvOf(std::vector<std::string> &Strings) {
  std::vector<char *> Ptrs;
  for (auto &S : Strings)
    Ptrs.push_back(S.data());
  Ptrs.push_back(nullptr);
  return Ptrs;
}

std::string describeStatus(int Status) {
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by ") + ::strsignal(WTERMSIG(Status));
  return "stopped";
}

} // namespace

std::string executorPath() {
  if (const char *Override = std::getenv("CATALYST_REMOTE_EXECUTOR"))
    return Override;
  return CATALYST_EXECUTOR_PATH;
}

ExecutorProcess::~ExecutorProcess() {
  stop();
}

::testing::AssertionResult ExecutorProcess::start(const ExecutorOptions &Options) {
  std::string Path = executorPath();
  if (Path.empty() || ::access(Path.c_str(), X_OK) != 0)
    return ::testing::AssertionFailure()
           << "no executable executor at '" << Path << "' (build catalyst-remote-executor)";
  int Pipe[2];
  if (::pipe2(Pipe, O_CLOEXEC) != 0)
    return ::testing::AssertionFailure() << "pipe2: " << std::strerror(errno);
  // Only stdout is redirected: the executor's log on stderr stays visible in
  // the test output.
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, Pipe[1], STDOUT_FILENO);
  auto Args = commandLine(Options);
  auto Env = environment(Options.Env);
  auto Argv = argvOf(Args);
  auto Envp = argvOf(Env);
  int Rc = ::posix_spawn(&Pid, Path.c_str(), &Actions, nullptr, Argv.data(), Envp.data());
  posix_spawn_file_actions_destroy(&Actions);
  ::close(Pipe[1]);
  StdoutFd = Pipe[0];
  if (Rc != 0) {
    Pid = -1;
    return ::testing::AssertionFailure() << "posix_spawn " << Path << ": " << std::strerror(Rc);
  }
  return readAddress();
}

::testing::AssertionResult ExecutorProcess::readAddress() {
  auto Deadline = Clock::now() + StartTimeout;
  std::string Out;
  while (Out.find('\n') == std::string::npos) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    pollfd P{StdoutFd, POLLIN, 0};
    int R = Left.count() > 0 ? ::poll(&P, 1, int(Left.count())) : 0;
    if (R == 0)
      return ::testing::AssertionFailure()
             << "the executor printed no address within " << StartTimeout.count()
             << " s; its stdout so far: '" << Out << "'";
    if (R < 0 && errno == EINTR)
      continue;
    char Buf[256];
    ssize_t N = ::read(StdoutFd, Buf, sizeof(Buf));
    if (N <= 0) {
      int Status = 0;
      ::waitpid(Pid, &Status, 0);
      Pid = -1;
      return ::testing::AssertionFailure() << "the executor closed its stdout before printing "
                                           << "an address and " << describeStatus(Status);
    }
    Out.append(Buf, size_t(N));
  }
  std::string Line = Out.substr(0, Out.find('\n'));
  if (Line.rfind(ListeningPrefix, 0) != 0)
    return ::testing::AssertionFailure()
           << "unexpected first line from the executor: '" << Line << "'";
  Address = Line.substr(std::strlen(ListeningPrefix));
  return ::testing::AssertionSuccess();
}

std::vector<pid_t> ExecutorProcess::connectionPids() const {
  return Pid > 0 ? childrenOf(Pid) : std::vector<pid_t>{};
}

::testing::AssertionResult
ExecutorProcess::waitForConnections(size_t N, std::vector<pid_t> &Pids,
                                    std::chrono::milliseconds Timeout) const {
  auto Deadline = Clock::now() + Timeout;
  for (;;) {
    Pids = connectionPids();
    if (Pids.size() == N)
      return ::testing::AssertionSuccess();
    if (Clock::now() > Deadline)
      return ::testing::AssertionFailure() << "expected " << N << " connection processes, found "
                                           << Pids.size() << " after " << Timeout.count() << " ms";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool ExecutorProcess::stop(std::chrono::milliseconds Timeout) {
  bool Clean = true;
  if (Pid > 0) {
    ::kill(Pid, SIGTERM);
    auto Deadline = Clock::now() + Timeout;
    while (::waitpid(Pid, nullptr, WNOHANG) == 0) {
      if (Clock::now() > Deadline) {
        Clean = false;
        ::kill(Pid, SIGKILL);
        ::waitpid(Pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Pid = -1;
  }
  if (StdoutFd >= 0)
    ::close(StdoutFd);
  StdoutFd = -1;
  return Clean;
}

} // namespace catalyst::remote::test
