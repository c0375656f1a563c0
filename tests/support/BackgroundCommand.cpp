//===- BackgroundCommand.cpp - A program a test runs beside itself --------===//

#include "BackgroundCommand.h"

#include "ChildEnvironment.h"
#include "Procfs.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

// In the forked child, before exec: only async-signal-safe calls. A group
// of its own (the child's pid names it), so that signal() reaches what it
// forks here and never the test. SIGTERM when the test's thread ends, so
// that a test killed by its timeout leaves no daemon of its cluster
// running; they end their steps and jobs in turn.
[[noreturn]] void execChild(char *const *Argv, char *const *Envp, const char *Output,
                            pid_t Parent) {
  if (::setpgid(0, 0) != 0 || ::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != Parent)
    ::_exit(127);
  int In = ::open("/dev/null", O_RDONLY);
  int Out = ::open(Output, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (In < 0 || Out < 0 || ::dup2(In, STDIN_FILENO) < 0 || ::dup2(Out, STDOUT_FILENO) < 0 ||
      ::dup2(Out, STDERR_FILENO) < 0)
    ::_exit(127);
  ::execve(Argv[0], Argv, Envp);
  ::_exit(127);
}

} // namespace

BackgroundCommand::~BackgroundCommand() {
  if (running())
    stop();
}

::testing::AssertionResult BackgroundCommand::start(const std::vector<std::string> &Argv,
                                                    const std::string &Output,
                                                    const std::vector<std::string> &Env) {
  if (Argv.empty() || running())
    return ::testing::AssertionFailure() << "nothing to start, or already started";
  OutputPath = Output;
  std::vector<std::string> Args = Argv, EnvStrings = tools::environmentWith(Env);
  auto ArgPtrs = tools::pointersTo(Args), EnvPtrs = tools::pointersTo(EnvStrings);
  pid_t Parent = ::getpid();
  Pid = ::fork();
  if (Pid == 0)
    execChild(ArgPtrs.data(), EnvPtrs.data(), OutputPath.c_str(), Parent);
  if (Pid < 0) {
    Pid = -1;
    return ::testing::AssertionFailure()
           << "cannot start " << Argv[0] << ": " << std::strerror(errno);
  }
  // Also here, so that the group exists when start() returns, whichever of
  // the two runs first; once the child has exec'd this fails, harmlessly.
  ::setpgid(Pid, Pid);
  Reaped = false;
  return ::testing::AssertionSuccess();
}

bool BackgroundCommand::signal(int Signal) {
  return running() && ::kill(-Pid, Signal) == 0;
}

bool BackgroundCommand::wait(std::chrono::milliseconds Timeout) {
  if (!running())
    return Pid > 0;
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  for (;;) {
    pid_t R = ::waitpid(Pid, &Status, WNOHANG);
    if (R == Pid || (R < 0 && errno == ECHILD)) {
      Reaped = true;
      return true;
    }
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool BackgroundCommand::stop(std::chrono::milliseconds Grace) {
  if (!running())
    return true;
  signal(SIGTERM);
  if (wait(Grace))
    return true;
  signal(SIGKILL);
  wait(std::chrono::seconds(10));
  return false;
}

std::string BackgroundCommand::status() const {
  if (!Reaped)
    return "";
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by ") + strsignal(WTERMSIG(Status));
  return "stopped";
}

int BackgroundCommand::exitStatus() const {
  return Reaped && WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

std::string BackgroundCommand::output() const {
  return OutputPath.empty() ? "" : readFile(OutputPath);
}

} // namespace catalyst::remote::test
